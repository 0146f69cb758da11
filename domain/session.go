package domain

import (
	"context"
	"time"
)

// People sign in to the desk through an OIDC provider (or, on a developer's
// machine, a development form). Everything a sign-in depends on is kept
// server-side: a pending LoginAttempt holds what the provider's answer must
// match, and a Session stands for the signed-in browser. The auth package
// decides; the store package persists.

// LoginAttempt is a sign-in in progress, waiting for the provider's answer.
// It is used once: the callback takes it, and nothing can take it again.
type LoginAttempt struct {
	StateHash string // hex SHA-256 of the state parameter: the lookup key
	NonceHash string // hex SHA-256 of the nonce the ID token must carry
	// CodeVerifier is the PKCE secret sent with the code exchange. It is
	// useless without the authorization code, which only the browser sees.
	CodeVerifier string
	ReturnTo     string // the local path to go to after signing in
	CreatedAt    time.Time
	ExpiresAt    time.Time
}

// Session is a signed-in browser. The cookie holds a random secret; only its
// SHA-256 is stored, so a database leak yields no usable session.
type Session struct {
	Hash string // hex SHA-256 of the cookie value
	// Person is who signed in, with the role their claims mapped to at the
	// time: a role change at the provider takes effect at the next sign-in.
	Person     Actor
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// SessionStore persists login attempts, sessions and the people who signed
// in; the auth package uses it and the store package implements it.
type SessionStore interface {
	CreateLoginAttempt(ctx context.Context, a LoginAttempt) error
	// TakeLoginAttempt removes the attempt with that state hash and returns
	// it, expired or not; ENotFound when there is none. Of two concurrent
	// callers with the same state, only one gets it.
	TakeLoginAttempt(ctx context.Context, stateHash string) (LoginAttempt, error)
	// PurgeLoginAttempts removes attempts that expired before now.
	PurgeLoginAttempts(ctx context.Context, now time.Time) error
	// CreateSession records the session and the person, keyed on (issuer,
	// subject), and chains the sign-in's audit event e onto the system
	// stream, in one transaction.
	CreateSession(ctx context.Context, s Session, e AuditEvent) error
	// SessionByHash returns the session, or ENotFound.
	SessionByHash(ctx context.Context, hash string) (Session, error)
	// TouchSession records activity on the session at at.
	TouchSession(ctx context.Context, hash string, at time.Time) error
	// DeleteSession ends the session; ending one that is gone is no error.
	DeleteSession(ctx context.Context, hash string) error
	// PurgeSessions removes sessions last seen before idleBefore or created
	// before createdBefore.
	PurgeSessions(ctx context.Context, idleBefore, createdBefore time.Time) error
}
