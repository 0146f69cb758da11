// Package auth says who is calling.
//
// Workflows present API tokens: random secrets shown once and stored only as
// their SHA-256, so a database leak yields nothing that can be replayed.
//
// People sign in to the desk through an OpenID Connect provider (OIDC): the
// authorization code flow with PKCE, its state, nonce and verifier kept
// server-side and used once, the ID token verified for issuer, audience,
// expiry and signature and its nonce compared. Their role comes from a claim
// through a role map. A sign-in becomes a server-side Session: the browser
// holds a random secret, the database its hash, and idle and absolute
// timeouts are enforced on every lookup. People may also call the API with
// an ID token from the same issuer. Without a provider, a development
// sign-in stands in, allowed only on a loopback address.
//
// auth imports only domain: callers get a domain.Actor and domain.Error
// codes, never a type of this package, across the wire.
package auth
