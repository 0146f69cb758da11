// Package auth says who is calling. Today that is a workflow presenting an
// API token: tokens are random secrets shown once and stored only as their
// SHA-256, so a database leak yields nothing that can be replayed. People
// (OIDC JWTs, desk sessions and roles) arrive later behind the same
// Authenticator interface; the Chain already leaves them a seat.
//
// auth imports only domain: callers get a domain.Actor and domain.Error
// codes, never a type of this package, across the wire.
package auth
