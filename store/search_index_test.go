package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestIndexSearch_takesTurns: the search indexer's batches take turns
// (migration 00030). While another transaction holds the turn — another
// replica's batch — a batch takes nothing and writes nothing: the change
// stays queued, and the holder's batch, which reads after the change,
// writes the newer text; the next batch finds the queue empty. So a batch
// that read an older state can never write after one that read a newer.
func TestIndexSearch_takesTurns(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	url := storetest.MigratedURL(t)
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	l := domain.NewLedger(s, testCards())
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "Race:Task", Type: "crm.task.create",
		Content: json.RawMessage(`{"note":"Racing"}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Operation.ID
	indexSearch(t, s)
	setError := func(msg string) {
		t.Helper()
		if err := store.Exec(ctx, s, "UPDATE operations SET last_error_message = ?, version = version + 1 WHERE id = ?", msg, id); err != nil {
			t.Fatal(err)
		}
	}
	setError("Older Grumble")

	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	hold, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtext('handoff.search:' || current_schema()))"); err != nil {
		t.Fatal(err)
	}

	if n, err := s.IndexSearch(ctx, 100); err != nil || n != 0 {
		t.Fatalf("a batch took %d changes (%v) while another held the turn, want none", n, err)
	}
	if rows, err := store.SearchSide(ctx, s, id); err != nil || len(rows) != 1 {
		t.Fatalf("a batch wrote while another held the turn: %+v %v", rows, err)
	}

	// The operation changes again; the batch that holds the turn reads
	// after that and writes the newer text.
	setError("Newer Grumble")
	var n int
	if err := hold.QueryRowContext(ctx, strings.Replace(store.IndexSearchSQL, "?", "$1", 1), 100).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("the holder's batch took %d changes, want both", n)
	}
	if n, err := s.IndexSearch(ctx, 100); err != nil || n != 0 {
		t.Errorf("after the holder's batch the queue held %d changes (%v), want none", n, err)
	}

	rows, err := store.SearchSide(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Body != "newer grumble\n" {
		t.Errorf("the side table holds %+v, want the newer error's text", rows)
	}
	if got := found(t, s, domain.ListQuery{Text: "older grumble", Deep: true, Limit: 50}); len(got) != 0 {
		t.Errorf("the older error's text is found: %v", got)
	}
	if got := found(t, s, domain.ListQuery{Text: "newer grumble", Deep: true, Limit: 50}); len(got) != 1 {
		t.Errorf("the newer error's text finds %v", got)
	}
}

// TestIndexSearch_writePathLeavesTheText: on PostgreSQL a registration and
// a settle that sets an error write no search text in their transactions
// (migration 00028): the side table gets it from the indexer, which finds
// every change in the database, once each.
func TestIndexSearch_writePathLeavesTheText(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	op := registerSettled(t, l, domain.Registration{Key: "Quiet:Task", Content: json.RawMessage(`{"note":"Silent Owl"}`)}, "",
		&domain.ErrorInfo{Class: domain.ClassValidation, Message: "Owl Asleep"})
	if rows, err := store.SearchSide(ctx, s, op.ID); err != nil || len(rows) != 0 {
		t.Fatalf("the write path wrote search text: %+v %v", rows, err)
	}
	n, err := s.IndexSearch(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 { // the registration, and the settle that set the error
		t.Errorf("the indexer took %d changes, want 2", n)
	}
	searchFollows(t, s, "indexed", op.ID, "silent owl")
}
