package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// refuseInserts makes every insert into table fail, as a database that
// breaks between two statements would.
func refuseInserts(t *testing.T, s *store.Store, table string) {
	t.Helper()
	if storetest.Postgres() {
		store.ExecRaw(t, s, `CREATE FUNCTION refuse_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`)
		store.ExecRaw(t, s, `CREATE TRIGGER refuse_insert BEFORE INSERT ON `+table+` FOR EACH ROW EXECUTE FUNCTION refuse_insert()`)
		return
	}
	store.ExecRaw(t, s, `CREATE TRIGGER refuse_insert BEFORE INSERT ON `+table+` BEGIN SELECT RAISE(ABORT, 'refused'); END`)
}

// TestTokens_CreatedWithItsAuditEvent: a token and its token_created event
// commit together — a token nobody audited cannot exist.
func TestTokens_CreatedWithItsAuditEvent(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	tokens := auth.NewTokens(s)
	_, tok, err := tokens.Create(ctx, "campaigns", "n8n")
	if err != nil {
		t.Fatal(err)
	}
	e, found, err := s.LastAudit(ctx, domain.SystemStream, "token_created")
	if err != nil || !found || !jsonHas(e.Detail, tok.ID) {
		t.Fatalf("token_created not on record: %+v %v %v", e, found, err)
	}
	refuseInserts(t, s, "audit_events")
	if _, _, err := tokens.Create(ctx, "campaigns", "zapier"); err == nil {
		t.Fatal("a token was created although its audit event could not be written")
	}
	list, err := tokens.List(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("a token without its audit event was kept: %+v %v", list, err)
	}
}

// TestSessions_SignInWithItsAuditEvent: a sign-in's session and its
// signed_in event commit together — no audited sign-in without a session.
func TestSessions_SignInWithItsAuditEvent(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	sessions := auth.NewSessions(s, s)
	p := domain.Actor{Kind: domain.ActorPerson, Issuer: "https://idp", Subject: "u1", Email: "a@x.com", Role: domain.RoleOperator}
	if _, err := sessions.Start(ctx, p, "oidc"); err != nil {
		t.Fatal(err)
	}
	first, found, err := s.LastAudit(ctx, domain.SystemStream, "signed_in")
	if err != nil || !found {
		t.Fatalf("signed_in not on record: %v %v", found, err)
	}
	refuseInserts(t, s, "sessions")
	if _, err := sessions.Start(ctx, p, "oidc"); err == nil {
		t.Fatal("a sign-in succeeded although its session could not be saved")
	}
	last, _, err := s.LastAudit(ctx, domain.SystemStream, "signed_in")
	if err != nil || last.ID != first.ID {
		t.Fatalf("a sign-in whose session failed was audited: %+v %v", last, err)
	}
}

// TestTokens_LastUsedOncePerMinute: authenticating records the token's last
// use, and writes it again only once a minute has passed.
func TestTokens_LastUsedOncePerMinute(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	tokens := auth.NewTokens(s)
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	tokens.Now = func() time.Time { return now }
	secret, _, err := tokens.Create(ctx, "campaigns", "n8n")
	if err != nil {
		t.Fatal(err)
	}
	lastUsed := func() *time.Time {
		t.Helper()
		list, err := tokens.List(ctx)
		if err != nil || len(list) != 1 {
			t.Fatalf("list: %v %v", list, err)
		}
		return list[0].LastUsedAt
	}
	if lastUsed() != nil {
		t.Fatal("a token never used has a last use")
	}
	use := func() {
		t.Helper()
		if _, err := tokens.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
	}
	use()
	if got := lastUsed(); got == nil || !got.Equal(now) {
		t.Fatalf("last_used_at %v, want %v", got, now)
	}
	now = now.Add(30 * time.Second)
	use()
	if got := lastUsed(); !got.Equal(now.Add(-30 * time.Second)) {
		t.Fatalf("written again within the minute: %v", got)
	}
	now = now.Add(31 * time.Second)
	use()
	if got := lastUsed(); !got.Equal(now) {
		t.Fatalf("not written after a minute: %v, want %v", got, now)
	}
}

func jsonHas(raw []byte, s string) bool {
	return strings.Contains(string(raw), s)
}
