package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestMigration_assigneeBackfill: migration 00010 gives an existing
// assignment the issuer and subject of the one decider whose identity it
// is — an email in any case, or the subject of someone without one — and
// leaves those it cannot name for sure (two people, a viewer, nobody)
// matched by identity.
func TestMigration_assigneeBackfill(t *testing.T) {
	ctx := context.Background()
	s, err := store.Connect(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := store.MigrateTo(ctx, s, 8); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for _, p := range [][4]string{
		{"https://idp", "u1", "ada@example.com", "operator"},
		{"https://idp", "u2", "sam@example.com", "approver"},
		{"https://other", "s9", "SAM@example.com", "admin"},
		{"https://idp", "u3", "vic@example.com", "viewer"},
		{"https://idp", "rob", "", "operator"},
	} {
		if err := store.Exec(ctx, s, "INSERT INTO people (issuer, subject, email, name, role, first_seen_at, last_seen_at) VALUES (?, ?, ?, '', ?, ?, ?)",
			p[0], p[1], p[2], p[3], now, now); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"Ada@Example.com": "https://idp u1", "sam@example.com": " ", "vic@example.com": " ",
		"rob": "https://idp rob", "gone@example.com": " ", "": " "}
	ids := map[string]string{}
	i := 0
	for assignee := range want {
		i++
		id := fmt.Sprintf("op_%02d", i)
		ids[assignee] = id
		if err := store.Exec(ctx, s, "INSERT INTO operations (id, namespace, key, type, state, version, fingerprint, content_version, "+
			"content_sha256, content, provider_key, assignee, created_at, updated_at) VALUES (?, 'ns', ?, 't', 'unknown_outcome', 3, 'f', 1, 'x', '{}', ?, ?, ?, ?)",
			id, "k"+id, "pk"+id, assignee, now, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for assignee, w := range want {
		op, _, err := s.Load(ctx, "", ids[assignee])
		if err != nil {
			t.Fatal(err)
		}
		if got := op.AssigneeIssuer + " " + op.AssigneeSubject; got != w || op.Assignee != assignee {
			t.Errorf("%q: backfilled %q (assignee %q), want %q", assignee, got, op.Assignee, w)
		}
	}
}
