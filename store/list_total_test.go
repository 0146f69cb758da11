package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestTotal_countsEveryPageUpToItsBound: a list's total counts the
// matches of every page, cursor and limit aside, and stops one past its
// bound, so that a large list costs no more than its bound to count.
func TestTotal_countsEveryPageUpToItsBound(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	for i := range 5 {
		intoDesk(t, l, fmt.Sprintf("evt_total:%d", i), i < 2)
	}
	q := domain.ListQuery{States: domain.DeskStates, Limit: 2}
	_, next, err := st.List(ctx, q)
	if err != nil || next == "" {
		t.Fatal(next, err)
	}
	q.Cursor = next
	for most, want := range map[int]int{10: 5, 5: 5, 3: 4, 0: 5} {
		if n, err := st.DeskCount(ctx, q, most); err != nil || n != want {
			t.Errorf("up to %d: %d (%v), want %d", most, n, err, want)
		}
	}
	q.States = []domain.State{domain.UnknownOutcome}
	indexSearch(t, st) // a part of the key: found once the search indexer ran
	if n, err := st.DeskCount(ctx, domain.ListQuery{States: q.States, Text: "evt_total", Deep: true}, 10); err != nil || n != 2 {
		t.Errorf("unknown outcomes: %d (%v), want 2", n, err)
	}
}
