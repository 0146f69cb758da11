package domain

import (
	"context"
	"time"
)

// APIToken is a workflow's credential: a name and its one namespace. Only a
// hash of the secret is ever stored.
type APIToken struct {
	ID        string
	Namespace string
	Name      string
	Hash      string // hex SHA-256 of the secret
	// PersonRole is, for a drill credential, the role of the person it
	// acts as (operator or approver); "" for a workflow token.
	PersonRole string
	CreatedAt  time.Time
	RevokedAt  *time.Time
	LastUsedAt *time.Time
}

// TokenStore persists API tokens; the auth package uses it and the store
// package implements it.
type TokenStore interface {
	// CreateToken stores the token and chains its audit event e onto the
	// system stream, in one transaction.
	CreateToken(ctx context.Context, t APIToken, e AuditEvent) error
	// TokenByHash returns the token with that hash, revoked or not, or
	// ENotFound.
	TokenByHash(ctx context.Context, hash string) (APIToken, error)
	ListTokens(ctx context.Context) ([]APIToken, error)
	// RevokeToken marks the token revoked; ENotFound when there is none.
	RevokeToken(ctx context.Context, id string, at time.Time) error
	// TouchToken records that the token was used at at, unless its last
	// use is recorded after notBefore: concurrent requests write it once.
	TouchToken(ctx context.Context, id string, at, notBefore time.Time) error
}

// TokenRevocationFeed tells a process at once that a token was revoked by
// any process sharing the database, so verified tokens can be cached.
type TokenRevocationFeed interface {
	// WatchRevocations calls live(true) once it is listening, revoked with
	// the hash of every token revoked anywhere after that, and live(false)
	// whenever it stops listening (it keeps trying to listen again). It
	// returns when ctx ends, or at once with live never called when the
	// database has no such feed.
	WatchRevocations(ctx context.Context, live func(bool), revoked func(hash string)) error
}
