package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// TokenPrefix starts every API token, so a leaked one is recognisable by
// secret scanners and the Chain can tell tokens from JWTs without parsing.
const TokenPrefix = "hnd_"

// maxSecretLen bounds what is hashed and looked up: a real secret is 47
// characters, anything far longer is not one of ours.
const maxSecretLen = 200

// NewToken returns a fresh secret: the prefix and 32 random bytes, base64url.
// crypto/rand.Read never fails on supported platforms (it aborts instead).
func NewToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// HashToken is the hex SHA-256 of a secret, the only form that is stored. A
// plain hash is enough: the secret has 256 bits of entropy, so there is
// nothing for a slow password hash to protect against.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// Tokens creates, lists, revokes and verifies workflow API tokens.
type Tokens struct {
	Store domain.TokenStore
	IDs   *domain.IDSource
	Now   func() time.Time
	// Creator is who the token_created audit event names; the system
	// when unset.
	Creator domain.Actor
}

// NewTokens wires Tokens with the real clock.
func NewTokens(s domain.TokenStore) *Tokens {
	return &Tokens{Store: s, IDs: &domain.IDSource{}, Now: time.Now}
}

// touchEvery limits last_used_at writes to one a minute per token, as for
// sessions: a busy workflow does not write on every request.
const tokenTouchEvery = time.Minute

var tokenNameRE = regexp.MustCompile(`^[a-z0-9._-]{1,100}$`)

// Create makes a token for one namespace and returns its secret, which is
// never stored and cannot be shown again.
func (t *Tokens) Create(ctx context.Context, namespace, name string) (string, domain.APIToken, error) {
	var errs []domain.FieldError
	if !tokenNameRE.MatchString(namespace) {
		errs = append(errs, domain.FieldError{Field: "namespace", Message: "must be 1-100 characters of a-z 0-9 . _ -"})
	}
	if !tokenNameRE.MatchString(name) {
		errs = append(errs, domain.FieldError{Field: "name", Message: "must be 1-100 characters of a-z 0-9 . _ -"})
	}
	if len(errs) > 0 {
		return "", domain.APIToken{}, domain.Invalid(errs...)
	}
	secret := NewToken()
	tok := domain.APIToken{ID: t.IDs.New("tok"), Namespace: namespace, Name: name,
		Hash: HashToken(secret), CreatedAt: t.Now().UTC()}
	creator := t.Creator
	if creator.Kind == (domain.ActorKind{}) {
		creator = domain.System
	}
	e := domain.SystemEvent(ctx, t.IDs, tok.CreatedAt, creator, "token_created", "",
		map[string]any{"token_id": tok.ID, "namespace": tok.Namespace, "name": tok.Name})
	if err := t.Store.CreateToken(ctx, tok, e); err != nil {
		return "", domain.APIToken{}, err
	}
	return secret, tok, nil
}

// List returns every token, revoked ones included, without secrets.
func (t *Tokens) List(ctx context.Context) ([]domain.APIToken, error) {
	return t.Store.ListTokens(ctx)
}

// Revoke ends a token's use at once.
func (t *Tokens) Revoke(ctx context.Context, id string) error {
	return t.Store.RevokeToken(ctx, id, t.Now().UTC())
}

// Authenticate turns a secret into the workflow actor it stands for. Every
// failure — malformed, unknown, revoked — is the same unauthenticated error,
// so a caller learns nothing about which tokens exist.
func (t *Tokens) Authenticate(ctx context.Context, secret string) (domain.Actor, error) {
	if !strings.HasPrefix(secret, TokenPrefix) || len(secret) > maxSecretLen {
		return domain.Actor{}, errBadToken()
	}
	hash := HashToken(secret)
	tok, err := t.Store.TokenByHash(ctx, hash)
	if domain.ErrorCode(err) == domain.ENotFound {
		return domain.Actor{}, errBadToken()
	} else if err != nil {
		return domain.Actor{}, err // unavailable or internal: not the caller's fault
	}
	// The hash is the lookup key, so this compare is belt and braces: it
	// guards against a store that matched loosely (collation, prefix).
	if subtle.ConstantTimeCompare([]byte(tok.Hash), []byte(hash)) != 1 || tok.RevokedAt != nil {
		return domain.Actor{}, errBadToken()
	}
	if now := t.Now().UTC(); tok.LastUsedAt == nil || now.Sub(*tok.LastUsedAt) >= tokenTouchEvery {
		// Best effort: the token is good whether or not its use is noted.
		_ = t.Store.TouchToken(ctx, tok.ID, now, now.Add(-tokenTouchEvery))
	}
	return domain.Actor{Kind: domain.ActorWorkflow, Name: tok.Name, Namespace: tok.Namespace}, nil
}

// errBadToken is built per call: a shared *domain.Error could be changed by
// whoever receives it.
func errBadToken() error { return domain.Errorf(domain.EUnauthenticated, "the token is not valid") }
