package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestIndexSearch_olderStateNeverWinsARace: two indexers index one
// operation at once, the first from the state it read before a change, the
// second from the state after it, and the first writes last. The side
// table must end with the later text: the indexer that read the older
// state writes nothing (migration 00028's stamp). The interleaving is made
// by holding the operation's stamp row locked in a transaction of the
// test's own, which then runs the second indexer's batch itself.
func TestIndexSearch_olderStateNeverWinsARace(t *testing.T) {
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
	setError("Older Grumble") // queued: the first indexer takes this one

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
	var xid string
	if err := hold.QueryRowContext(ctx, "SELECT stamp::text FROM operation_search_stamp WHERE operation_id = $1 FOR UPDATE", id).Scan(&xid); err != nil {
		t.Fatal(err)
	}
	if err := hold.QueryRowContext(ctx, "SELECT transactionid::text FROM pg_locks WHERE pid = pg_backend_pid() "+
		"AND locktype = 'transactionid' AND granted").Scan(&xid); err != nil {
		t.Fatal(err)
	}

	// The first indexer reads the older state and waits for the stamp.
	first := make(chan error, 1)
	go func() { _, err := s.IndexSearch(ctx, 100); first <- err }()
	for waiting := 0; waiting == 0; {
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted "+
			"AND transactionid::text = $1", xid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-first:
			t.Fatalf("the first indexer did not wait for the stamp's lock: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}

	// The operation changes again; the second indexer, in the transaction
	// that holds the stamp, writes the newer text and commits first.
	setError("Newer Grumble")
	if _, err := hold.ExecContext(ctx, strings.Replace(store.IndexSearchSQL, "?", "$1", 1), 100); err != nil {
		t.Fatal(err)
	}
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatal(err)
	}

	rows, err := store.SearchSide(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Body != "newer grumble\n" {
		t.Errorf("after the race the side table holds %+v, want the newer error's text", rows)
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
