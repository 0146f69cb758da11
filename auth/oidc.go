package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/opshandoff/handoff/domain"
)

// OIDCConfig configures sign-in with an OpenID Connect provider.
type OIDCConfig struct {
	Issuer       string // exactly as the provider's discovery document spells it
	ClientID     string
	ClientSecret string
	RedirectURL  string // the public URL + "/auth/callback"
	RolesClaim   string // "" means "groups"; dots walk into nested claims
	RoleMap      RoleMap
	// Scopes nil: openid, and of email, profile and the roles claim those
	// the provider says it supports.
	Scopes []string
	// DiscoveryTimeout bounds start-up's talk with the provider; 0: 10s.
	DiscoveryTimeout time.Duration
	// HTTPClient talks to the provider; nil: one with a 10s timeout, so a
	// provider that hangs cannot hold a sign-in (or start-up) forever.
	HTTPClient *http.Client
	Now        func() time.Time // nil: time.Now
	Store      domain.SessionStore
}

// OIDC signs people in with the authorization code flow and PKCE (S256),
// and verifies people's JWTs for the API. The provider is discovered once,
// in NewOIDC.
type OIDC struct {
	cfg      OIDCConfig
	verifier *oidc.IDTokenVerifier
	oauth    oauth2.Config
	client   *http.Client
}

var _ Authenticator = (*OIDC)(nil)

// LoginTTL is how long a person may take at the provider before the
// pending sign-in is forgotten.
const LoginTTL = 10 * time.Minute

// maxJWTLen bounds a bearer JWT; real ID tokens are a few KiB.
const maxJWTLen = 16 << 10

// NewOIDC discovers the provider, within the discovery timeout: a provider
// that cannot be reached gives a clear error, never a hang.
func NewOIDC(ctx context.Context, cfg OIDCConfig) (*OIDC, error) {
	if cfg.RolesClaim == "" {
		cfg.RolesClaim = "groups"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DiscoveryTimeout <= 0 {
		cfg.DiscoveryTimeout = 10 * time.Second
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	dctx, cancel := context.WithTimeout(oidc.ClientContext(ctx, client), cfg.DiscoveryTimeout)
	defer cancel()
	provider, err := oidc.NewProvider(dctx, cfg.Issuer)
	if err != nil {
		if errors.Is(dctx.Err(), context.DeadlineExceeded) {
			return nil, fmt.Errorf("OIDC provider %s did not answer its discovery document within %s", cfg.Issuer, cfg.DiscoveryTimeout)
		}
		return nil, fmt.Errorf("OIDC provider %s: discovery failed: %w", cfg.Issuer, err)
	}
	scopes := cfg.Scopes
	if scopes == nil {
		scopes = defaultScopes(provider, cfg.RolesClaim)
	}
	o := &OIDC{cfg: cfg, client: client,
		verifier: provider.Verifier(&oidc.Config{ClientID: cfg.ClientID, Now: cfg.Now}),
		oauth: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL,
			Endpoint: provider.Endpoint(), Scopes: scopes}}
	return o, nil
}

// defaultScopes asks for what the provider offers of email, profile and a
// scope named like the roles claim (e.g. "groups"); providers refuse scopes
// they do not know, so nothing unadvertised is asked for.
func defaultScopes(p *oidc.Provider, rolesClaim string) []string {
	var meta struct {
		Supported []string `json:"scopes_supported"`
	}
	_ = p.Claims(&meta)
	scopes := []string{oidc.ScopeOpenID}
	if len(meta.Supported) == 0 {
		return append(scopes, oidc.ScopeEmail, oidc.ScopeProfile)
	}
	for _, s := range []string{oidc.ScopeEmail, oidc.ScopeProfile, strings.Split(rolesClaim, ".")[0]} {
		if slices.Contains(meta.Supported, s) && !slices.Contains(scopes, s) {
			scopes = append(scopes, s)
		}
	}
	return scopes
}

// Issuer is the provider's issuer URL.
func (o *OIDC) Issuer() string { return o.cfg.Issuer }

// Begin starts a sign-in: it records the state, the nonce's hash and the
// PKCE verifier server-side, and returns the state (for the browser-binding
// cookie) and the provider URL to send the browser to.
func (o *OIDC) Begin(ctx context.Context, returnTo string) (state, authURL string, err error) {
	now := o.cfg.Now().UTC()
	// Sign-ins that were never finished are forgotten here, so the table
	// stays as small as the sign-ins of the last LoginTTL.
	if err := o.cfg.Store.PurgeLoginAttempts(ctx, now); err != nil {
		return "", "", err
	}
	state, nonce, verifier := randomSecret(), randomSecret(), oauth2.GenerateVerifier()
	a := domain.LoginAttempt{StateHash: HashToken(state), NonceHash: HashToken(nonce), CodeVerifier: verifier,
		ReturnTo: returnTo, CreatedAt: now, ExpiresAt: now.Add(LoginTTL)}
	if err := o.cfg.Store.CreateLoginAttempt(ctx, a); err != nil {
		return "", "", err
	}
	return state, o.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), nil
}

// Finish completes a sign-in from the provider's callback: the state must
// name a pending attempt (which is used up whatever happens next), the code
// is exchanged with the PKCE verifier, the ID token is verified for issuer,
// audience, expiry and signature, and its nonce compared — go-oidc's Verify
// does not check it. It returns the person and where to go next.
func (o *OIDC) Finish(ctx context.Context, state, code string) (domain.Actor, string, error) {
	if state == "" || code == "" {
		return domain.Actor{}, "", domain.Errorf(domain.EUnauthenticated, "the provider's answer has no state or code")
	}
	a, err := o.cfg.Store.TakeLoginAttempt(ctx, HashToken(state))
	if domain.ErrorCode(err) == domain.ENotFound {
		return domain.Actor{}, "", domain.Errorf(domain.EUnauthenticated, "this sign-in is unknown or was already used")
	} else if err != nil {
		return domain.Actor{}, "", err
	}
	if !o.cfg.Now().Before(a.ExpiresAt) {
		return domain.Actor{}, "", domain.Errorf(domain.EUnauthenticated, "this sign-in took longer than %s", LoginTTL)
	}
	tok, err := o.oauth.Exchange(oidc.ClientContext(ctx, o.client), code, oauth2.VerifierOption(a.CodeVerifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			return domain.Actor{}, "", domain.Wrap(domain.EUnauthenticated, errors.New(re.ErrorCode), "the provider refused the sign-in code")
		}
		return domain.Actor{}, "", domain.Wrap(domain.EUnavailable, err, "the sign-in provider cannot be reached")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return domain.Actor{}, "", domain.Errorf(domain.EUnauthenticated, "the provider sent no ID token")
	}
	idt, err := o.verifier.Verify(ctx, raw)
	if err != nil {
		return domain.Actor{}, "", domain.Wrap(domain.EUnauthenticated, err, "the ID token is not valid")
	}
	if subtle.ConstantTimeCompare([]byte(HashToken(idt.Nonce)), []byte(a.NonceHash)) != 1 {
		return domain.Actor{}, "", domain.Errorf(domain.EUnauthenticated, "the ID token was not issued for this sign-in (nonce)")
	}
	p, err := o.person(idt)
	return p, a.ReturnTo, err
}

// Authenticate verifies a person's JWT presented to the API: an ID token of
// the same issuer whose audience is this client. No nonce: the API has no
// sign-in to bind it to.
func (o *OIDC) Authenticate(ctx context.Context, bearer string) (domain.Actor, error) {
	if len(bearer) > maxJWTLen {
		return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "the token is not valid")
	}
	idt, err := o.verifier.Verify(ctx, bearer)
	if err != nil {
		return domain.Actor{}, domain.Wrap(domain.EUnauthenticated, err, "the token is not valid")
	}
	return o.person(idt)
}

// person maps a verified token's claims to a person with a role. A token
// for several audiences must name this client as its authorized party,
// which go-oidc leaves to its caller.
func (o *OIDC) person(idt *oidc.IDToken) (domain.Actor, error) {
	var all map[string]any
	var pc struct {
		personClaims
		AZP string `json:"azp"`
	}
	if err := idt.Claims(&all); err != nil {
		return domain.Actor{}, domain.Wrap(domain.EUnauthenticated, err, "the token's claims are not readable")
	}
	if err := idt.Claims(&pc); err != nil {
		return domain.Actor{}, domain.Wrap(domain.EUnauthenticated, err, "the token's claims are not readable")
	}
	if len(idt.Audience) > 1 && pc.AZP != o.cfg.ClientID {
		return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "the token was issued to another client")
	}
	role, ok := o.cfg.RoleMap.RoleFor(claimValues(all, o.cfg.RolesClaim))
	if !ok {
		return domain.Actor{}, domain.Errorf(domain.EForbidden,
			"none of the values of your %q claim is mapped to a Handoff role; ask an administrator to map one in HANDOFF_ROLE_MAP",
			o.cfg.RolesClaim)
	}
	return personFrom(idt.Issuer, pc.personClaims, role)
}
