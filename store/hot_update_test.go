package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestHotUpdates_lifecycle: on PostgreSQL the updates of an operation's
// row that a running operation makes — its begin, its heartbeats and a
// completed settle — change no indexed column of operations, so they are
// HOT (heap-only: no entry in any of the table's indexes), as counted by
// the server's statistics (migration 00029).
//
// A HOT update also needs room for the new version on the old one's page,
// and whether a page has it depends on more than the store: pruning the
// dead versions waits for every older snapshot in the database, other
// tests' included. So the test's own table leaves nine tenths of each page
// free (fillfactor 10), and what it counts is the store's part: that no
// update changes an indexed column. BenchmarkLifecycleWAL counts HOT
// updates under the migration's fillfactor.
//
// The statistics are per table and this test's schema is its own, so the
// counts are this test's writes alone. A backend hands its counts to the
// server when it exits: each phase runs on a store of its own, closed at
// its end, and the test waits for the counts to arrive.
func TestHotUpdates_lifecycle(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("HOT updates are PostgreSQL's: set " + storetest.EnvPostgres)
	}
	const n = 120
	ctx := context.Background()
	url := storetest.MigratedURL(t)
	stats, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer stats.Close()
	if _, err := stats.Exec("ALTER TABLE operations SET (fillfactor = 10)"); err != nil {
		t.Fatal(err)
	}

	type lease struct {
		id  string
		tok int64
	}
	ops := make([]lease, n)
	// phase runs f for each operation on a store of its own and returns
	// how many updates of operations it made and how many were HOT.
	phase := func(name string, f func(l *domain.Ledger, i int)) (upd, hot int64) {
		t.Helper()
		ins0, upd0, hot0 := opStats(t, stats)
		s, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		l := domain.NewLedger(s, testCards())
		for i := range n {
			f(l, i)
		}
		s.Close()
		upd, hot = waitStats(t, stats, ins0, upd0, hot0, n)
		t.Logf("%s: %d updates of operations, %d HOT (%.0f%%)", name, upd, hot, 100*float64(hot)/float64(max(upd, 1)))
		return upd, hot
	}
	phase("register and claim", func(l *domain.Ledger, i int) {
		key := fmt.Sprintf("hot-%d", i)
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
			Content: json.RawMessage(`{"title":"Follow up ` + key + `","owner":"u_9"}`), Claim: &domain.Claim{Worker: "w1"}})
		if err != nil || res.Claim == nil {
			t.Fatal(err, res.ClaimRefused)
		}
		ops[i] = lease{res.Operation.ID, res.Claim.Lease.Token}
	})
	for _, p := range []struct {
		name string
		f    func(l *domain.Ledger, i int) error
	}{
		{"begin", func(l *domain.Ledger, i int) error {
			_, err := l.Workflow.Begin(ctx, wf, ops[i].id, domain.Begin{LeaseToken: ops[i].tok})
			return err
		}},
		{"heartbeat", func(l *domain.Ledger, i int) error {
			_, err := l.Workflow.Heartbeat(ctx, wf, ops[i].id, domain.Heartbeat{LeaseToken: ops[i].tok, Lease: time.Minute})
			return err
		}},
	} {
		upd, hot := phase(p.name, func(l *domain.Ledger, i int) {
			if err := p.f(l, i); err != nil {
				t.Fatal(err)
			}
		})
		if upd < n || hot < upd*9/10 {
			t.Errorf("%s: %d of %d updates of operations were HOT, want at least 90%%", p.name, hot, upd)
		}
	}
	upd, hot := phase("settle", func(l *domain.Ledger, i int) {
		if _, err := l.Workflow.Settle(ctx, wf, ops[i].id, domain.Settle{LeaseToken: ops[i].tok, Outcome: domain.OutcomeCompleted,
			Result: &domain.Result{Ref: fmt.Sprintf("crm_hot_%d", i)}}); err != nil {
			t.Fatal(err)
		}
	})
	if upd < n || hot < upd*9/10 {
		t.Errorf("settle: %d of %d updates of operations were HOT, want at least 90%%", hot, upd)
	}
}

// opStats reads the operations table's inserts, updates and HOT updates
// as the server's statistics hold them now.
func opStats(t *testing.T, db *sql.DB) (ins, upd, hot int64) {
	t.Helper()
	if _, err := db.Exec("SELECT pg_stat_clear_snapshot()"); err != nil {
		t.Fatal(err)
	}
	err := db.QueryRow(`SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
WHERE relid = 'operations'::regclass`).Scan(&ins, &upd, &hot)
	if err != nil {
		t.Fatal(err)
	}
	return ins, upd, hot
}

// waitStats waits until the statistics count at least want inserts and
// updates of operations more than ins0 and upd0, and a moment more for any
// late backend, and returns the updates and HOT updates since upd0 and
// hot0.
func waitStats(t *testing.T, db *sql.DB, ins0, upd0, hot0, want int64) (upd, hot int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; {
		ins, u, _ := opStats(t, db)
		if ins-ins0+u-upd0 >= want || time.Now().After(deadline) {
			time.Sleep(time.Second)
			_, u, h := opStats(t, db)
			return u - upd0, h - hot0
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestHotUpdates_changingColumnsLast: on PostgreSQL the columns that a
// running operation's updates — its begin, a heartbeat, a completed
// settle — change stand after every long value they leave as it was (the
// key, the content, its hashes, the provider key), so that the WAL record
// of each HOT update, which leaves out the bytes the new version shares
// with the old at its start, does not carry those again (migration 00031).
func TestHotUpdates_changingColumnsLast(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("the order of the columns matters to PostgreSQL's WAL: set " + storetest.EnvPostgres)
	}
	ctx := context.Background()
	url := storetest.MigratedURL(t)
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := domain.NewLedger(s, testCards())
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "order-column", Type: "crm.task.create",
		Content: json.RawMessage(`{"title":"Follow up on the order column","owner":"u_9"}`), Claim: &domain.Claim{Worker: "w1"}})
	if err != nil || res.Claim == nil {
		t.Fatal(err, res.ClaimRefused)
	}
	id, tok := res.Operation.ID, res.Claim.Lease.Token
	row := func() map[string]any {
		t.Helper()
		var b []byte
		if err := db.QueryRow("SELECT to_jsonb(o) FROM operations o WHERE id = $1", id).Scan(&b); err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	rows := []map[string]any{row()}
	steps := []func() error{
		func() error { _, err := l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: tok}); return err },
		func() error {
			_, err := l.Workflow.Heartbeat(ctx, wf, id, domain.Heartbeat{LeaseToken: tok, Lease: time.Minute})
			return err
		},
		func() error {
			_, err := l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeCompleted,
				Result: &domain.Result{Ref: "crm_order_column"}})
			return err
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row())
	}

	cols, err := db.Query(`SELECT attname, attnum FROM pg_attribute WHERE attrelid = 'operations'::regclass AND attnum > 0
AND NOT attisdropped AND attgenerated = '' ORDER BY attnum`)
	if err != nil {
		t.Fatal(err)
	}
	defer cols.Close()
	firstChanged, firstName := 1<<30, ""
	type col struct {
		name string
		num  int
	}
	var long []col
	for cols.Next() {
		var c col
		if err := cols.Scan(&c.name, &c.num); err != nil {
			t.Fatal(err)
		}
		changed := false
		for i := 1; i < len(rows); i++ {
			if fmt.Sprint(rows[i][c.name]) != fmt.Sprint(rows[i-1][c.name]) {
				changed = true
			}
		}
		if changed && c.num < firstChanged {
			firstChanged, firstName = c.num, c.name
		}
		if v, ok := rows[0][c.name].(string); !changed && ok && len(v) > 16 {
			long = append(long, c)
		}
	}
	if len(long) < 5 {
		t.Fatalf("only %v are long and unchanged", long)
	}
	for _, c := range long {
		if c.num > firstChanged {
			t.Errorf("%s, unchanged by a begin, a heartbeat and a settle, stands after %s, which they change", c.name, firstName)
		}
	}
}
