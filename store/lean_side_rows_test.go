package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestMigration_leanSideRows: migration 00030 on a database that holds
// operations keeps what 00029's side tables answered — a completed
// operation found by its result ref at once, an open one a twin of a new
// registration; its Down puts back 00029's tables, after which 00030 runs
// again.
func TestMigration_leanSideRows(t *testing.T) {
	ctx := context.Background()
	s, err := store.Connect(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := store.MigrateTo(ctx, s, 29); err != nil {
		t.Fatal(err)
	}
	laterColumns(t, s, 29, true)
	l := domain.NewLedger(s, testCards())
	done := registerSettled(t, l, domain.Registration{Key: "Lean:Done", Content: json.RawMessage(`{"note":"Lean One"}`)}, "CRM-Lean-1", nil)
	open := lostCall(t, l, "Lean:Open", "crm.task.create", `{"title":"lean twin","owner":"u_1"}`)
	indexSearch(t, s)

	twins := 0
	migrate := func() {
		t.Helper()
		laterColumns(t, s, 29, false)
		if err := s.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step string) {
		t.Helper()
		if got := found(t, s, domain.ListQuery{Text: "crm-lean-1", Deep: true, Limit: 50}); !slices.Equal(got, []string{done.ID}) {
			t.Errorf("%s: the result ref finds %v, want %s", step, got, done.ID)
		}
		twins++
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "Lean:Twin" + string(rune('0'+twins)), Type: "crm.task.create",
			Content: json.RawMessage(`{"owner":"u_1","title":"lean twin"}`), Claim: &domain.Claim{Worker: "w2"}})
		if err != nil || res.Operation.LastError == nil || res.Operation.LastError.Code != domain.CodeTwinUnresolved {
			t.Errorf("%s: the open operation's twin was not held: %+v %v", step, res.Operation.LastError, err)
		}
	}

	migrate()
	check("migrated")
	if err := store.MigrateDownTo(ctx, s, 29); err != nil {
		t.Fatal(err)
	}
	laterColumns(t, s, 29, true)
	if storetest.Postgres() { // the tables 00029's code reads, as it wrote them
		var refs, opens int
		if err := store.QueryRow(ctx, s, "SELECT (SELECT count(*) FROM operation_result_refs WHERE operation_id = ? AND value = 'crm-lean-1'), "+
			"(SELECT count(*) FROM open_operations WHERE id = ?)", []any{&refs, &opens}, done.ID, open.ID); err != nil {
			t.Fatal(err)
		}
		if refs != 1 || opens != 1 {
			t.Errorf("undone: %d result refs, %d open rows, want 1 and 1", refs, opens)
		}
	}
	migrate()
	check("migrated again")

	// The open operation completes: its result ref is found at once, with
	// no indexer run.
	if _, err := l.Workflow.Reconcile(ctx, wf, open.ID, domain.Reconcile{Found: true, Result: &domain.Result{Ref: "CRM-Lean-2"}}); err != nil {
		t.Fatal(err)
	}
	if got := found(t, s, domain.ListQuery{Text: "CRM-LEAN-2", Deep: true, Limit: 50}); !slices.Equal(got, []string{open.ID}) {
		t.Errorf("the reconciled operation's result ref finds %v, want %s", got, open.ID)
	}
}

// TestOpenOperations_followTheRow: open_operations holds an open
// operation's row as operations has it, whatever of it changes — here its
// identity hash, by which (with its namespace) PostgreSQL's trigger finds
// the side row (migration 00030) — and one row only.
func TestOpenOperations_followTheRow(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "Open:Follow", Type: "crm.task.create",
		Content: json.RawMessage(`{"note":"follow"}`), Claim: &domain.Claim{Worker: "w1"}})
	if err != nil || res.Claim == nil {
		t.Fatal(err, res.ClaimRefused)
	}
	id := res.Operation.ID
	if err := store.Exec(ctx, s, "UPDATE operations SET identity_hash = 'sha256:other', key = 'Open:Moved' WHERE id = ?", id); err != nil {
		t.Fatal(err)
	}
	var n int
	var hash, key string
	if err := store.QueryRow(ctx, s, "SELECT count(*), max(identity_hash), max(key) FROM open_operations WHERE id = ?",
		[]any{&n, &hash, &key}, id); err != nil {
		t.Fatal(err)
	}
	if n != 1 || hash != "sha256:other" || key != "Open:Moved" {
		t.Errorf("open_operations holds %d rows of the operation, identity %q, key %q; want 1, sha256:other, Open:Moved", n, hash, key)
	}
}
