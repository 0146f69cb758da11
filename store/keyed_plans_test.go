package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestGroupCommit_keyedPlans: a flush's plans stay lookups by key whatever
// the planner's costs say. Every connection here keeps a generic plan from
// its first run of a statement (plan_cache_mode=force_generic_plan), made
// while the tables are analyzed empty, as pgx and PostgreSQL do after five
// runs. The table then grows by 20,000 operations and attempts with no
// ANALYZE — autovacuum off — and more flushes of one and of several
// changes follow. Together they must read far fewer rows of operations
// and attempts than one full read of either: a plan costed on the empty
// tables reads it all at every flush.
//
// Whether a flush after the growth runs a plan made before it is not the
// test's to choose: the pool picks the connection, and a new schema made
// by any other test resets every cached plan of every backend. So every
// plan here, whenever it is made, is costed to prefer what a plan made on
// empty tables does: a random page read costs 1,000 sequential ones
// (random_page_cost), which makes a whole read of either table cheaper
// than a lookup by key at any size it reaches here.
func TestGroupCommit_keyedPlans(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	u, err := url.Parse(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("plan_cache_mode", "force_generic_plan")
	q.Set("random_page_cost", "1000")
	u.RawQuery = q.Encode()
	s, err := store.Open(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			s.Close()
		}
	}()
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := store.Exec(ctx, s, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("ANALYZE operations, attempts")

	ids := &domain.IDSource{}
	env := func() domain.Env {
		return domain.Env{Card: testCards()["crm.task.create"], Now: time.Now().UTC().Truncate(time.Microsecond),
			Actor: wf, NewID: ids.New, Jitter: func() float64 { return 0 }}
	}
	decide := func(id string, cmd domain.Command) domain.Change {
		t.Helper()
		op, _, err := s.Load(ctx, "", id)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := domain.Decide(op, cmd, env())
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	round := 0
	// lifecycles registers, begins and settles n operations: with n of
	// four or more each step is one multi-row flush, with one each is a
	// single statement's.
	lifecycles := func(n int) {
		t.Helper()
		round++
		var regs []domain.Change
		for i := range n {
			regs = append(regs, newRegistration(t, ids, fmt.Sprintf("evt_kp%d_%d:task", round, i)))
		}
		step := func(chs []domain.Change, create bool) {
			t.Helper()
			var ok []bool
			var errs []error
			if create {
				ok, errs = store.CreateTogether(s, chs)
			} else {
				ok, errs = store.ApplyTogether(s, chs)
			}
			for i := range chs {
				if errs[i] != nil || !ok[i] {
					t.Fatalf("round %d change %d: written %v, %v", round, i, ok[i], errs[i])
				}
			}
		}
		step(regs, true)
		var begins, settles []domain.Change
		for _, r := range regs {
			begins = append(begins, decide(r.Op.ID, domain.Begin{LeaseToken: r.Op.LeaseToken}))
		}
		step(begins, false)
		for _, r := range regs {
			settles = append(settles, decide(r.Op.ID, domain.Settle{LeaseToken: r.Op.LeaseToken,
				Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "crm_" + r.Op.Key}}))
		}
		step(settles, false)
	}
	for range 3 { // the plans are made here, on the empty tables
		lifecycles(6)
		lifecycles(1)
	}

	template := newRegistration(t, ids, "evt_kp_template:task")
	if _, created, err := s.Create(ctx, template); err != nil || !created {
		t.Fatalf("template: %v %v", created, err)
	}
	// The rows are added on a connection of their own, whose reads (the
	// foreign keys' checks) are counted before the flushes start.
	const grown = 20_000
	grow, err := sql.Open("pgx", u.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		// The columns the store writes: the generated ones take their own.
		`INSERT INTO operations (` + store.OpColumns + `) SELECT c.` + strings.ReplaceAll(store.OpColumns, ", ", ", c.") +
			` FROM operations o, generate_series(1, $1) g,
		jsonb_populate_record(o, jsonb_build_object('id', 'op_kp' || g, 'key', 'kp' || g)) AS c WHERE o.id = $2`,
		`INSERT INTO attempts SELECT (jsonb_populate_record(a, jsonb_build_object('id', 'att_kp' || g, 'operation_id', 'op_kp' || g))).*
		FROM attempts a, generate_series(1, $1) g WHERE a.operation_id = $2`,
	} {
		if _, err := grow.Exec(stmt, grown, template.Op.ID); err != nil {
			t.Fatal(err)
		}
	}
	grow.Close()
	admin, err := sql.Open("pgx", os.Getenv(storetest.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	stats := func(table string) (ins, upd, read int64) {
		t.Helper()
		if err := admin.QueryRow(`SELECT n_tup_ins, n_tup_upd, COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0)
			FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = $2`, q.Get("search_path"), table).Scan(&ins, &upd, &read); err != nil {
			t.Fatal(err)
		}
		return ins, upd, read
	}
	// Statistics reach pg_stat_user_tables when a backend goes idle or
	// exits: wait for the counts the closed connections leave.
	waitFor := func(table string, ins, upd int64) (read int64) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			i, u, r := stats(table)
			if i >= ins && u >= upd {
				return r
			}
			if time.Now().After(deadline) {
				t.Fatalf("the statistics of %s show %d inserts and %d updates, want %d and %d", table, i, u, ins, upd)
			}
		}
	}
	opsBefore := waitFor("operations", grown, 0)
	attBefore := waitFor("attempts", grown, 0)

	for range 5 {
		lifecycles(6)
		lifecycles(1)
	}
	s.Close()
	closed = true
	read := waitFor("operations", grown, (3+5)*7*2) - opsBefore
	attRead := waitFor("attempts", grown, 0) - attBefore
	if read >= grown || attRead >= grown {
		t.Fatalf("the flushes read %d operations and %d attempts of %d: a plan reads the whole table", read, attRead, grown)
	}
}
