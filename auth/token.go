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
	"sync"
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

// DefaultTokenCacheTTL is how long a verified token is trusted without
// asking the database again, while revocations reach this process at once.
const DefaultTokenCacheTTL = 5 * time.Second

// Tokens creates, lists, revokes and verifies workflow API tokens.
//
// Verified tokens are cached for at most CacheTTL, and only while a
// revocation feed is live (see Watch): a revocation anywhere drops the
// token here at once, and a feed that stops listening empties the cache and
// turns it off until it listens again.
type Tokens struct {
	Store domain.TokenStore
	IDs   *domain.IDSource
	Now   func() time.Time
	// Creator is who the token_created audit event names; the system
	// when unset.
	Creator domain.Actor
	// CacheTTL bounds how long a verified token is trusted; 0 disables the
	// cache.
	CacheTTL time.Duration

	mu    sync.Mutex
	live  bool   // the revocation feed is listening
	gen   uint64 // bumped by every revocation and every change of live
	cache map[string]cachedToken
}

type cachedToken struct {
	actor   domain.Actor
	expires time.Time
}

// NewTokens wires Tokens with the real clock.
func NewTokens(s domain.TokenStore) *Tokens {
	return &Tokens{Store: s, IDs: &domain.IDSource{}, Now: time.Now, CacheTTL: DefaultTokenCacheTTL}
}

// Watch listens to the feed until ctx ends, keeping the cache honest: it is
// used only while the feed is live, and each revoked token leaves it at
// once. Without Watch nothing is cached.
func (t *Tokens) Watch(ctx context.Context, feed domain.TokenRevocationFeed) error {
	defer t.setLive(false)
	return feed.WatchRevocations(ctx, t.setLive, t.forget)
}

func (t *Tokens) setLive(live bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.live = live
	t.gen++
	t.cache = nil
}

// forget drops the token with the hash from the cache.
func (t *Tokens) forget(hash string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.gen++
	delete(t.cache, hash)
}

// cached returns the actor of a verified, unexpired, cached token, and the
// generation to pass to remember after a real lookup.
func (t *Tokens) cached(hash string) (domain.Actor, bool, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.cache[hash]; ok && t.live && t.Now().Before(c.expires) {
		return c.actor, true, t.gen
	}
	return domain.Actor{}, false, t.gen
}

// remember caches a verified token unless a revocation or a change of the
// feed happened since the lookup began (gen): the lookup may predate it.
func (t *Tokens) remember(hash string, actor domain.Actor, gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.live || t.gen != gen || t.CacheTTL <= 0 {
		return
	}
	if t.cache == nil {
		t.cache = map[string]cachedToken{}
	}
	now := t.Now()
	if len(t.cache) >= 10000 { // bounded: drop what has expired, else everything
		for h, c := range t.cache {
			if !now.Before(c.expires) {
				delete(t.cache, h)
			}
		}
		if len(t.cache) >= 10000 {
			t.cache = map[string]cachedToken{}
		}
	}
	t.cache[hash] = cachedToken{actor: actor, expires: now.Add(t.CacheTTL)}
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

// DrillIssuer is the issuer of the people drill credentials act as: no
// identity provider's, so they are never mistaken for someone who signed in.
const DrillIssuer = "handoff:drill-credential"

// CreateDrillPerson makes a drill credential: a token that acts as a person
// with role (operator or approver), for `handoff drill --url --operator-token
// --approver-token` against a Handoff whose people sign in without bearer
// tokens (the development sign-in). Two credentials are two people, so four
// eyes hold between them. Only an admin issues one (the CLI, with the
// database); it is audited like any token and revoked like one.
func (t *Tokens) CreateDrillPerson(ctx context.Context, name string, role domain.Role) (string, domain.APIToken, error) {
	if !tokenNameRE.MatchString(name) {
		return "", domain.APIToken{}, domain.Invalid(domain.FieldError{Field: "name", Message: "must be 1-100 characters of a-z 0-9 . _ -"})
	}
	if role != domain.RoleOperator && role != domain.RoleApprover {
		return "", domain.APIToken{}, domain.Invalid(domain.FieldError{Field: "role", Message: "a drill credential is an operator or an approver"})
	}
	secret := NewToken()
	tok := domain.APIToken{ID: t.IDs.New("tok"), Name: name, PersonRole: role.String(), Hash: HashToken(secret), CreatedAt: t.Now().UTC()}
	creator := t.Creator
	if creator.Kind == (domain.ActorKind{}) {
		creator = domain.System
	}
	e := domain.SystemEvent(ctx, t.IDs, tok.CreatedAt, creator, "token_created", "",
		map[string]any{"token_id": tok.ID, "name": tok.Name, "drill_person_role": tok.PersonRole})
	if err := t.Store.CreateToken(ctx, tok, e); err != nil {
		return "", domain.APIToken{}, err
	}
	return secret, tok, nil
}

// drillPerson is the person a drill credential acts as: its own subject
// under DrillIssuer, with the role it was issued for.
func drillPerson(tok domain.APIToken) (domain.Actor, error) {
	role, err := domain.ParseRole(tok.PersonRole)
	if err != nil || (role != domain.RoleOperator && role != domain.RoleApprover) {
		return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "the token is not valid")
	}
	// A drill credential is a person only inside the drill namespace: it
	// may decide the drill's own operations and nothing of a real workflow's.
	return domain.Actor{Kind: domain.ActorPerson, Name: "drill credential " + tok.Name, Issuer: DrillIssuer,
		Subject: tok.ID, Role: role, Namespace: domain.DrillNamespace}, nil
}

// List returns every token, revoked ones included, without secrets.
func (t *Tokens) List(ctx context.Context) ([]domain.APIToken, error) {
	return t.Store.ListTokens(ctx)
}

// Revoke ends a token's use at once, here and, through the revocation
// feed, in every other process.
func (t *Tokens) Revoke(ctx context.Context, id string) error {
	err := t.Store.RevokeToken(ctx, id, t.Now().UTC())
	t.mu.Lock()
	t.gen++
	t.cache = nil
	t.mu.Unlock()
	return err
}

// Authenticate turns a secret into the workflow actor it stands for. Every
// failure — malformed, unknown, revoked — is the same unauthenticated error,
// so a caller learns nothing about which tokens exist.
func (t *Tokens) Authenticate(ctx context.Context, secret string) (domain.Actor, error) {
	if !strings.HasPrefix(secret, TokenPrefix) || len(secret) > maxSecretLen {
		return domain.Actor{}, errBadToken()
	}
	hash := HashToken(secret)
	actor, ok, gen := t.cached(hash)
	if ok {
		return actor, nil
	}
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
	actor = domain.Actor{Kind: domain.ActorWorkflow, Name: tok.Name, Namespace: tok.Namespace}
	if tok.PersonRole != "" {
		if actor, err = drillPerson(tok); err != nil {
			return domain.Actor{}, errBadToken()
		}
	}
	t.remember(hash, actor, gen)
	return actor, nil
}

// errBadToken is built per call: a shared *domain.Error could be changed by
// whoever receives it.
func errBadToken() error { return domain.Errorf(domain.EUnauthenticated, "the token is not valid") }
