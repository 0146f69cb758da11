package domain

import (
	"context"
	"time"
)

// APIToken is a workflow's credential: a name and its one namespace. Only a
// hash of the secret is ever stored.
type APIToken struct {
	ID         string
	Namespace  string
	Name       string
	Hash       string // hex SHA-256 of the secret
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
