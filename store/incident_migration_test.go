package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestMigration_incidentBackfill: migration 00019 gives the items already
// on the desk their incidents, counted, so an upgraded desk's Incidents
// page is not empty; a drill's items and items off the desk join none.
// Migration 00033 counts their states.
func TestMigration_incidentBackfill(t *testing.T) {
	ctx := context.Background()
	s, err := store.Connect(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := store.MigrateTo(ctx, s, 16); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, r := range [][4]string{
		{"ns", "unknown_outcome", "timeout", "old message"},
		{"other", "unknown_outcome", "timeout", "new message"},
		{"ns", "failed_terminal", "validation", "bad"},
		{"ns", "completed", "timeout", ""},
		{domain.DrillNamespace, "unknown_outcome", "timeout", "drill"},
	} {
		id := fmt.Sprintf("op_%02d", i)
		if err := store.Exec(ctx, s, "INSERT INTO operations (id, namespace, key, type, state, version, fingerprint, content_version, "+
			"content_sha256, content, provider_key, last_error_class, last_error_message, created_at, updated_at) "+
			"VALUES (?, ?, ?, 'crm.task.create', ?, 3, 'f', 1, 'x', '{}', ?, ?, ?, ?, ?)",
			id, r[0], "k"+id, r[1], "pk"+id, r[2], r[3], now, now.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	l := domain.NewLedger(s, testCards())
	list, err := l.Incidents.DeskIncidents(ctx, person)
	if err != nil || len(list) != 2 {
		t.Fatalf("incidents: %+v %v", list, err)
	}
	in := list[0]
	if in.Error.Class != "timeout" || in.OpenItems != 2 || in.TotalItems != 2 || len(in.Namespaces) != 2 || in.Message != "new message" ||
		in.Status != domain.IncidentOpen || in.NotifiedTotal != 2 {
		t.Fatalf("the timeouts: %+v", in)
	}
	// Migration 00033 counts the open items by state.
	if !slices.Equal(in.States(), []domain.State{domain.UnknownOutcome}) ||
		!slices.Equal(list[1].States(), []domain.State{domain.FailedTerminal}) {
		t.Fatalf("the states: %v and %v", in.States(), list[1].States())
	}
	// The backfilled items leave their incident as any other.
	op, _, _ := s.Load(ctx, "", "op_00")
	if _, err := l.Desk.Resolve(ctx, triager, op.ID, domain.Resolve{Action: domain.ResolveConfirmExecuted, Result: &domain.Result{Ref: "r"},
		Reason: "found", ExpectedVersion: op.Version}); err != nil {
		t.Fatal(err)
	}
	if in, _, _, _ := l.Incidents.DeskIncident(ctx, person, in.ID); in.OpenItems != 1 {
		t.Fatalf("after deciding a backfilled item: %+v", in)
	}
}

var triager = domain.Actor{Kind: domain.ActorPerson, Name: "Ann", Email: "ann@example.com", Subject: "ann", Issuer: "idp",
	Role: domain.RoleOperator}
