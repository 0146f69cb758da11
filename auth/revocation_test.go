package auth_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestTokens_revokedOnAnotherReplica: two replicas share the database; B
// has verified and cached the token when A revokes it. B must refuse it
// without waiting for its cache to expire: the cache here lives for an
// hour, so only the revocation feed can drop the token in time.
func TestTokens_revokedOnAnotherReplica(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("the revocation feed needs PostgreSQL (set " + storetest.EnvPostgres + ")")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := storetest.URL(t)
	open := func() *store.Store {
		s, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	sa, sb := open(), open()
	lookups := &countingTokens{TokenStore: sb}
	a, b := auth.NewTokens(sa), auth.NewTokens(lookups)
	b.CacheTTL = time.Hour
	watching := make(chan error, 1)
	go func() { watching <- b.Watch(ctx, sb) }()

	secret, tok, err := a.Create(ctx, "campaigns", "n8n")
	if err != nil {
		t.Fatal(err)
	}
	// B verifies the token until it answers from its cache, which it
	// fills once its feed listens: a verification that asks no database.
	waitFor(t, func() bool {
		before := lookups.n.Load()
		if _, err := b.Authenticate(ctx, secret); err != nil {
			t.Fatalf("B refused a live token: %v", err)
		}
		return lookups.n.Load() == before
	})
	if err := a.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	// B refuses the token well within its hour-long cache. The bound is
	// generous for a loaded machine; the feed delivers in milliseconds.
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := b.Authenticate(ctx, secret)
		if domain.ErrorCode(err) == domain.EUnauthenticated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica B still accepts a token replica A revoked: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-watching; err != nil {
		t.Fatalf("watch: %v", err)
	}
}

// countingTokens counts the lookups that reach the database.
type countingTokens struct {
	domain.TokenStore
	n atomic.Int64
}

func (c *countingTokens) TokenByHash(ctx context.Context, hash string) (domain.APIToken, error) {
	c.n.Add(1)
	return c.TokenStore.TokenByHash(ctx, hash)
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
