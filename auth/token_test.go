package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// memTokens is an in-memory domain.TokenStore: the real one lives in store/
// and is tested there; here only the auth rules are under test.
type memTokens struct {
	mu     sync.Mutex
	byHash map[string]domain.APIToken
	err    error
}

func (m *memTokens) CreateToken(_ context.Context, t domain.APIToken, _ domain.AuditEvent) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byHash == nil {
		m.byHash = map[string]domain.APIToken{}
	}
	m.byHash[t.Hash] = t
	return nil
}

func (m *memTokens) TokenByHash(_ context.Context, hash string) (domain.APIToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return domain.APIToken{}, m.err
	}
	t, ok := m.byHash[hash]
	if !ok {
		return domain.APIToken{}, domain.Errorf(domain.ENotFound, "no token")
	}
	return t, nil
}

func (m *memTokens) ListTokens(context.Context) ([]domain.APIToken, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []domain.APIToken
	for _, t := range m.byHash {
		out = append(out, t)
	}
	return out, nil
}

func (m *memTokens) TouchToken(_ context.Context, id string, at, notBefore time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, t := range m.byHash {
		if t.ID == id && (t.LastUsedAt == nil || t.LastUsedAt.Before(notBefore)) {
			t.LastUsedAt = &at
			m.byHash[h] = t
		}
	}
	return nil
}

func (m *memTokens) RevokeToken(_ context.Context, id string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for h, t := range m.byHash {
		if t.ID == id {
			t.RevokedAt = &at
			m.byHash[h] = t
			return nil
		}
	}
	return domain.Errorf(domain.ENotFound, "no token %s", id)
}

func TestNewToken(t *testing.T) {
	a, b := NewToken(), NewToken()
	if !strings.HasPrefix(a, TokenPrefix) || len(a) != len(TokenPrefix)+43 {
		t.Fatalf("NewToken() = %q, want hnd_ and 43 base64url characters", a)
	}
	if a == b {
		t.Fatal("two tokens are equal")
	}
	if h := HashToken(a); len(h) != 64 || h == HashToken(b) {
		t.Fatalf("HashToken = %q", h)
	}
}

func TestTokens_Lifecycle(t *testing.T) {
	ctx := context.Background()
	tokens := NewTokens(&memTokens{})
	secret, tok, err := tokens.Create(ctx, "campaigns", "n8n-prod")
	if err != nil {
		t.Fatal(err)
	}
	if tok.Hash != HashToken(secret) || strings.Contains(tok.Hash, secret) || !strings.HasPrefix(tok.ID, "tok_") {
		t.Fatalf("stored token %+v does not match its secret", tok)
	}
	actor, err := tokens.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	want := domain.Actor{Kind: domain.ActorWorkflow, Name: "n8n-prod", Namespace: "campaigns"}
	if actor != want {
		t.Fatalf("actor = %+v, want %+v", actor, want)
	}
	if err := tokens.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := tokens.Authenticate(ctx, secret); domain.ErrorCode(err) != domain.EUnauthenticated {
		t.Fatalf("revoked token: err = %v, want unauthenticated", err)
	}
}

func TestTokens_Authenticate_refuses(t *testing.T) {
	ctx := context.Background()
	tokens := NewTokens(&memTokens{})
	for _, secret := range []string{"", "hnd_", "hnd_unknown", "Bearer hnd_x", "eyJhbGciOi.x.y", "hnd_" + strings.Repeat("a", 500)} {
		if _, err := tokens.Authenticate(ctx, secret); domain.ErrorCode(err) != domain.EUnauthenticated {
			t.Errorf("Authenticate(%q) err = %v, want unauthenticated", secret, err)
		}
	}
}

// looseTokens is a token store that matched loosely — a collation, a
// prefix, a bug — and returns its one token whatever hash was asked for.
type looseTokens struct {
	memTokens
	tok domain.APIToken
}

func (l *looseTokens) TokenByHash(context.Context, string) (domain.APIToken, error) {
	return l.tok, nil
}

func TestTokens_Authenticate_refusesAStoredHashThatDiffers(t *testing.T) {
	ctx := context.Background()
	secret := NewToken()
	tokens := NewTokens(&looseTokens{tok: domain.APIToken{ID: "tok_1", Namespace: "campaigns", Name: "n8n-prod",
		Hash: HashToken(secret), CreatedAt: time.Now()}})
	if _, err := tokens.Authenticate(ctx, secret); err != nil {
		t.Fatalf("the token's own secret: %v", err)
	}
	if a, err := tokens.Authenticate(ctx, NewToken()); domain.ErrorCode(err) != domain.EUnauthenticated {
		t.Fatalf("another secret whose hash the store's token does not have: %+v, err = %v, want unauthenticated", a, err)
	}
}

func TestTokens_Authenticate_storeDown(t *testing.T) {
	down := domain.Wrap(domain.EUnavailable, errors.New("dial tcp: refused"), "the database cannot be reached")
	tokens := NewTokens(&memTokens{err: down})
	if _, err := tokens.Authenticate(context.Background(), NewToken()); domain.ErrorCode(err) != domain.EUnavailable {
		t.Fatalf("err = %v, want unavailable (a database outage is not the caller's bad credential)", err)
	}
}

func TestTokens_Create_validates(t *testing.T) {
	tokens := NewTokens(&memTokens{})
	for _, tc := range []struct{ ns, name, field string }{
		{"", "a", "namespace"}, {"Campaigns", "a", "namespace"}, {"a", "", "name"},
		{"a", "has space", "name"}, {strings.Repeat("a", 101), "a", "namespace"},
	} {
		_, _, err := tokens.Create(context.Background(), tc.ns, tc.name)
		e := domain.AsError(err)
		if e.Code != domain.EInvalid || len(e.Fields) != 1 || e.Fields[0].Field != tc.field {
			t.Errorf("Create(%q, %q) = %v, want validation_failed on %s", tc.ns, tc.name, err, tc.field)
		}
	}
}

type fixedActor domain.Actor

func (f fixedActor) Authenticate(context.Context, string) (domain.Actor, error) {
	return domain.Actor(f), nil
}

func TestChain(t *testing.T) {
	ctx := context.Background()
	person := fixedActor{Kind: domain.ActorPerson, Email: "alice@example.com", Role: domain.RoleOperator}
	workflow := fixedActor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	withPeople := Chain{Tokens: workflow, People: person}
	if a, err := withPeople.Authenticate(ctx, "hnd_abc"); err != nil || a.Kind != domain.ActorWorkflow {
		t.Errorf("token: %+v, %v", a, err)
	}
	if a, err := withPeople.Authenticate(ctx, "eyJ.x.y"); err != nil || a.Kind != domain.ActorPerson {
		t.Errorf("jwt: %+v, %v", a, err)
	}
	tokensOnly := Chain{Tokens: workflow}
	for _, bearer := range []string{"", "eyJ.x.y"} {
		if _, err := tokensOnly.Authenticate(ctx, bearer); domain.ErrorCode(err) != domain.EUnauthenticated {
			t.Errorf("Authenticate(%q) without people: err = %v, want unauthenticated", bearer, err)
		}
	}
}

// feed is a revocation feed the test drives by hand.
type feed struct {
	live    func(bool)
	revoked func(string)
	ready   chan struct{}
}

func (f *feed) WatchRevocations(ctx context.Context, live func(bool), revoked func(string)) error {
	f.live, f.revoked = live, revoked
	close(f.ready)
	<-ctx.Done()
	return nil
}

func TestTokens_cache(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mem := &memTokens{}
	tokens := NewTokens(mem)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tokens.Now = func() time.Time { return now }
	secret, tok, err := tokens.Create(ctx, "campaigns", "n8n")
	if err != nil {
		t.Fatal(err)
	}
	// The database has the token revoked behind this process's back: only
	// the cache can still accept it.
	revokeBehind := func() {
		t.Helper()
		if err := mem.RevokeToken(ctx, tok.ID, now); err != nil {
			t.Fatal(err)
		}
	}
	accepts := func() bool {
		_, err := tokens.Authenticate(ctx, secret)
		return err == nil
	}

	// No feed: nothing is cached.
	if !accepts() {
		t.Fatal("live token refused")
	}
	revokeBehind()
	if accepts() {
		t.Fatal("a token revoked in the database was accepted without a revocation feed")
	}

	f := &feed{ready: make(chan struct{})}
	go func() { _ = tokens.Watch(ctx, f) }()
	<-f.ready
	f.live(true)
	secret, tok, err = tokens.Create(ctx, "campaigns", "n8n-2")
	if err != nil {
		t.Fatal(err)
	}
	if !accepts() {
		t.Fatal("live token refused")
	}
	revokeBehind()
	if !accepts() {
		t.Fatal("a verified token was not cached while the feed listens")
	}
	now = now.Add(DefaultTokenCacheTTL)
	if accepts() {
		t.Fatalf("a cached token outlived the %s cache", DefaultTokenCacheTTL)
	}

	// A revocation from the feed drops the token at once.
	secret, tok, err = tokens.Create(ctx, "campaigns", "n8n-3")
	if err != nil {
		t.Fatal(err)
	}
	if !accepts() {
		t.Fatal("live token refused")
	}
	revokeBehind()
	f.revoked(HashToken(secret))
	if accepts() {
		t.Fatal("a token the feed named revoked was still accepted")
	}

	// A feed that stops listening empties the cache.
	secret, tok, err = tokens.Create(ctx, "campaigns", "n8n-4")
	if err != nil {
		t.Fatal(err)
	}
	if !accepts() {
		t.Fatal("live token refused")
	}
	revokeBehind()
	f.live(false)
	if accepts() {
		t.Fatal("a cached token was accepted after the feed stopped listening")
	}
}
