package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestDeskList_byTypeAndAge: the queue filtered by a type and an age lists
// and counts that type's desk items that entered the desk before the
// bound, newest last, and nothing else. On PostgreSQL both are read from
// the desk's index by type (migration 00032), not from every desk item in
// order with each row fetched for its type.
func TestDeskList_byTypeAndAge(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	cards := testCards()
	ids := &domain.IDSource{}
	now := time.Now().UTC().Truncate(time.Second)
	bound := now.Add(-7 * 24 * time.Hour)
	var changes []domain.Change
	var want []string // coupon.issue desk items older than the bound, in created_at order
	for i := range 1200 {
		typ := []string{"crm.task.create", "coupon.issue"}[i%2]
		at := now.Add(-time.Duration(1200-i) * 12 * time.Minute) // ten days back, oldest first
		env := domain.Env{Card: cards[typ], Now: at, Actor: wf, NewID: ids.New}
		ch, err := domain.NewOperation(domain.Registration{Namespace: wf.Namespace, Key: fmt.Sprintf("evt_%04d:%s", i, typ), Type: typ},
			[]byte(`{"n":1}`), false, env)
		if err != nil {
			t.Fatal(err)
		}
		op := &ch.Op
		switch {
		case i%3 == 0:
			op.State, op.DeskEnteredAt = domain.UnknownOutcome, &at
			op.LastError = &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}
		case i%3 == 1:
			op.State, op.DeskEnteredAt = domain.FailedTerminal, &at
			op.LastError = &domain.ErrorInfo{Class: domain.ClassValidation, Message: "refused"}
		default:
			op.State, op.Result = domain.Completed, &domain.Result{Ref: "r"}
		}
		if typ == "coupon.issue" && op.State.InDesk() && at.Before(bound) {
			want = append(want, op.ID)
		}
		changes = append(changes, ch)
	}
	if err := s.CreateBatch(ctx, changes); err != nil {
		t.Fatal(err)
	}
	q := domain.ListQuery{States: domain.DeskStates, Types: []string{"coupon.issue"}, InDeskBefore: bound, Limit: 50}
	var got []string
	for page := 0; ; page++ {
		ops, next, err := s.DeskList(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			got = append(got, op.ID)
		}
		if next == "" {
			break
		}
		q.Cursor = next
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the queue by type and age listed %d items, want %d (the first %.40v, want %.40v)", len(got), len(want), got, want)
	}
	q.Cursor = ""
	if n, err := s.DeskCount(ctx, q, 10_000); err != nil || n != len(want) {
		t.Fatalf("its count: %d %v, want %d", n, err, len(want))
	}
	if !storetest.Postgres() {
		return // the plan is PostgreSQL's
	}
	// Each read in the page's order, stopped at the bound. The list may
	// take any index on a table this small; its count, read from an
	// index alone, must take this one. Planned with the statistics and
	// the visibility map a served database has (autovacuum is off here):
	// with every page still to be checked in the heap, reading the
	// trigram index over the desk's result refs whole, or the list's
	// index in the heap's own order, can look cheaper.
	allVisible(t, s, "operations")
	plan, err := store.ExplainDeskCount(s, q, 10_000, "enable_seqscan = off")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "Index Only Scan using operations_desk_by_type") {
		t.Fatalf("the queue's count by type is not read from the desk's index by type alone:\n%s", plan)
	}
}

// allVisible vacuums and analyzes table until the visibility map marks
// every page of it all-visible, as autovacuum leaves a table no one is
// writing. One VACUUM may not: the rows just written are not yet visible
// to a transaction another test in this database began before them, and
// until it ends no page holding them can be marked.
func allVisible(t *testing.T, s *store.Store, table string) {
	t.Helper()
	ctx := context.Background()
	var pages, visible int64
	for deadline := time.Now().Add(30 * time.Second); ; {
		if err := store.Exec(ctx, s, "VACUUM (ANALYZE) "+table); err != nil {
			t.Fatal(err)
		}
		err := store.QueryRow(ctx, s, "SELECT relpages, relallvisible FROM pg_class WHERE oid = ?::regclass",
			[]any{&pages, &visible}, table)
		if err != nil {
			t.Fatal(err)
		}
		if visible >= pages {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d of %d pages all-visible after 30 s of VACUUM: a transaction in this database stays open", table, visible, pages)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
