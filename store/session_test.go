package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestLoginAttempts_singleUse: of many concurrent takers of one state, one
// gets the attempt; expired attempts are purged.
func TestLoginAttempts_singleUse(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	a := domain.LoginAttempt{StateHash: "s1", NonceHash: "n1", CodeVerifier: "v1", ReturnTo: "/desk/queue", CreatedAt: now, ExpiresAt: now.Add(10 * time.Minute)}
	if err := st.CreateLoginAttempt(ctx, a); err != nil {
		t.Fatal(err)
	}
	var got atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, err := st.TakeLoginAttempt(ctx, "s1")
			switch {
			case err == nil:
				got.Add(1)
				if b != a {
					t.Errorf("took %+v, want %+v", b, a)
				}
			case domain.ErrorCode(err) != domain.ENotFound:
				t.Errorf("take: %v", err)
			}
		}()
	}
	wg.Wait()
	if got.Load() != 1 {
		t.Fatalf("%d takers got the attempt", got.Load())
	}
	old := a
	old.StateHash, old.ExpiresAt = "s2", now.Add(-time.Second)
	if err := st.CreateLoginAttempt(ctx, old); err != nil {
		t.Fatal(err)
	}
	if err := st.PurgeLoginAttempts(ctx, now); err != nil {
		t.Fatal(err)
	}
	if _, err := st.TakeLoginAttempt(ctx, "s2"); domain.ErrorCode(err) != domain.ENotFound {
		t.Fatalf("an expired attempt survived the purge: %v", err)
	}
}

func TestSessions_store(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	p := domain.Actor{Kind: domain.ActorPerson, Issuer: "https://idp", Subject: "u1", Email: "a@x.com", Name: "A", Role: domain.RoleOperator}
	for i, hash := range []string{"h1", "h2"} { // the same person twice: one person row, two sessions
		s := domain.Session{Hash: hash, Person: p, CreatedAt: now.Add(time.Duration(i) * time.Hour), LastSeenAt: now.Add(time.Duration(i) * time.Hour)}
		e := domain.SystemEvent(ctx, &domain.IDSource{}, s.CreatedAt, p, "signed_in", "", nil)
		if err := st.CreateSession(ctx, s, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := st.SessionByHash(ctx, "h2")
	if err != nil || got.Person != p || !got.CreatedAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("session: %+v %v", got, err)
	}
	if err := st.TouchSession(ctx, "h2", now.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.SessionByHash(ctx, "h2"); !got.LastSeenAt.Equal(now.Add(2 * time.Hour)) {
		t.Fatalf("touch: %+v", got)
	}
	// h1 was last seen at 9:00: idle by 9:30.
	if err := st.PurgeSessions(ctx, now.Add(30*time.Minute), now.Add(-12*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SessionByHash(ctx, "h1"); domain.ErrorCode(err) != domain.ENotFound {
		t.Fatalf("idle session survived: %v", err)
	}
	if err := st.DeleteSession(ctx, "h2"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.SessionByHash(ctx, "h2"); domain.ErrorCode(err) != domain.ENotFound {
		t.Fatalf("deleted session: %v", err)
	}
	if err := st.DeleteSession(ctx, "h2"); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
}
