package auth_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// clock is a fake clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var alice = domain.Actor{Kind: domain.ActorPerson, Issuer: "https://idp.example.com", Subject: "u-alice",
	Email: "alice@example.com", Name: "Alice", Role: domain.RoleOperator}

func newSessions(t *testing.T) (*auth.Sessions, *clock, *store.Store) {
	st := storetest.New(t)
	c := &clock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	s := auth.NewSessions(st, st)
	s.Now = c.Now
	return s, c, st
}

// TestSessions with a fake clock on the real database: each way a session
// ends makes its cookie worthless.
func TestSessions(t *testing.T) {
	ctx := context.Background()
	t.Run("idle timeout", func(t *testing.T) {
		s, c, _ := newSessions(t)
		secret, err := s.Start(ctx, alice, "oidc")
		if err != nil {
			t.Fatal(err)
		}
		for range 5 { // used every 29 minutes: alive for well over the idle timeout
			c.Add(29 * time.Minute)
			if p, err := s.Lookup(ctx, secret); err != nil || p != alice {
				t.Fatalf("active session: %+v %v", p, err)
			}
		}
		c.Add(30 * time.Minute)
		if _, err := s.Lookup(ctx, secret); domain.ErrorCode(err) != domain.EUnauthenticated {
			t.Fatalf("after 30 idle minutes: %v", err)
		}
		c.Add(-30 * time.Minute) // the expired session was deleted, not just refused
		if _, err := s.Lookup(ctx, secret); domain.ErrorCode(err) != domain.EUnauthenticated {
			t.Fatalf("an idle-expired session came back: %v", err)
		}
	})
	t.Run("absolute timeout", func(t *testing.T) {
		s, c, _ := newSessions(t)
		secret, err := s.Start(ctx, alice, "oidc")
		if err != nil {
			t.Fatal(err)
		}
		for elapsed := time.Duration(0); elapsed < 12*time.Hour-20*time.Minute; elapsed += 20 * time.Minute {
			c.Add(20 * time.Minute)
			if _, err := s.Lookup(ctx, secret); err != nil {
				t.Fatalf("at %s: %v", elapsed, err)
			}
		}
		c.Add(20 * time.Minute) // 12 h since sign-in, however busy
		if _, err := s.Lookup(ctx, secret); domain.ErrorCode(err) != domain.EUnauthenticated {
			t.Fatalf("after 12 h: %v", err)
		}
	})
	t.Run("sign-out", func(t *testing.T) {
		s, _, st := newSessions(t)
		secret, err := s.Start(ctx, alice, "oidc")
		if err != nil {
			t.Fatal(err)
		}
		if err := s.End(ctx, secret); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Lookup(ctx, secret); domain.ErrorCode(err) != domain.EUnauthenticated {
			t.Fatalf("after sign-out: %v", err)
		}
		if err := s.End(ctx, secret); err != nil {
			t.Fatalf("signing out twice: %v", err)
		}
		if _, err := st.SessionByHash(ctx, auth.HashToken(secret)); domain.ErrorCode(err) != domain.ENotFound {
			t.Fatalf("the session row survived sign-out: %v", err)
		}
	})
	t.Run("a new session at every sign-in, audited", func(t *testing.T) {
		s, _, st := newSessions(t)
		a, err := s.Start(ctx, alice, "oidc")
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.Start(ctx, alice, "oidc")
		if err != nil || a == b || len(a) != 43 {
			t.Fatalf("two sign-ins: %q %q %v", a, b, err)
		}
		if _, err := st.SessionByHash(ctx, a); domain.ErrorCode(err) != domain.ENotFound {
			t.Fatal("the cookie value itself is stored; only its hash may be")
		}
		events, err := st.Timeline(ctx, domain.SystemStream)
		if err != nil || len(events) != 2 {
			t.Fatalf("system events: %d %v", len(events), err)
		}
		e := events[0]
		var d map[string]any
		_ = json.Unmarshal(e.Detail, &d)
		if e.Action != "signed_in" || e.Actor != alice || d["issuer"] != alice.Issuer || d["subject"] != alice.Subject ||
			d["email"] != alice.Email || d["role"] != "operator" || d["method"] != "oidc" {
			t.Fatalf("sign-in event: %+v %s", e, e.Detail)
		}
		if strings.Contains(string(e.Detail), a) || strings.Contains(string(e.Detail), auth.HashToken(a)) {
			t.Fatal("the audit event carries the cookie value")
		}
	})
	t.Run("refuses what is not a session", func(t *testing.T) {
		s, _, _ := newSessions(t)
		for _, v := range []string{"", "nope", string(make([]byte, 500))} {
			if _, err := s.Lookup(ctx, v); domain.ErrorCode(err) != domain.EUnauthenticated {
				t.Errorf("Lookup(%q): %v", v, err)
			}
		}
		if _, err := s.Start(ctx, domain.Actor{Kind: domain.ActorWorkflow, Name: "w"}, "oidc"); err == nil {
			t.Error("a workflow got a desk session")
		}
	})
}
