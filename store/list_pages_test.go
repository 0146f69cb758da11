package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestList_pagesForwardAndBackInEveryOrder: in each of the desk's orders
// the pages read forwards are the whole list in that order, each row once,
// and a previous page (Until the cursor a page was reached with) is exactly
// the page before it, with the Until of the one before that.
func TestList_pagesForwardAndBackInEveryOrder(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	for i := range 7 {
		intoDesk(t, l, fmt.Sprintf("evt_pages:%d", i), i%2 == 0)
	}
	orders := []struct {
		name string
		q    domain.ListQuery
		less func(a, b domain.Operation) bool // a comes before b
	}{
		{"oldest", domain.ListQuery{}, func(a, b domain.Operation) bool {
			return a.CreatedAt.Before(b.CreatedAt) || a.CreatedAt.Equal(b.CreatedAt) && a.ID < b.ID
		}},
		{"newest", domain.ListQuery{NewestFirst: true}, func(a, b domain.Operation) bool {
			return a.CreatedAt.After(b.CreatedAt) || a.CreatedAt.Equal(b.CreatedAt) && a.ID > b.ID
		}},
		{"changed", domain.ListQuery{RecentFirst: true}, func(a, b domain.Operation) bool {
			return a.UpdatedAt.After(b.UpdatedAt) || a.UpdatedAt.Equal(b.UpdatedAt) && a.ID > b.ID
		}},
	}
	ids := func(ops []domain.Operation) []string {
		out := make([]string, len(ops))
		for i, op := range ops {
			out[i] = op.ID
		}
		return out
	}
	for _, o := range orders {
		t.Run(o.name, func(t *testing.T) {
			q := o.q
			q.States, q.Limit = domain.DeskStates, 100
			all, _, err := st.List(ctx, q)
			if err != nil || len(all) != 7 {
				t.Fatalf("the whole list: %d rows (%v)", len(all), err)
			}
			for i := 1; i < len(all); i++ {
				if !o.less(all[i-1], all[i]) {
					t.Fatalf("row %d (%s) is not before row %d (%s)", i-1, all[i-1].ID, i, all[i].ID)
				}
			}
			q.Limit = 2
			var pages [][]string
			var cursors []string // the cursor each page was reached with
			for cur := ""; ; {
				q.Cursor = cur
				ops, next, err := st.List(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				pages, cursors = append(pages, ids(ops)), append(cursors, cur)
				if next == "" {
					break
				}
				cur = next
			}
			if got := slices.Concat(pages...); !slices.Equal(got, ids(all)) {
				t.Fatalf("pages forwards %v, want %v", pages, ids(all))
			}
			q.Cursor = ""
			for i := len(pages) - 1; i >= 1; i-- {
				q.Until = cursors[i]
				ops, before, err := st.List(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids(ops), pages[i-1]) {
					t.Errorf("previous of page %d: %v, want %v", i+1, ids(ops), pages[i-1])
				}
				if want := cursors[i-1]; before != want {
					t.Errorf("previous of page %d: the page before is %q, want %q", i+1, before, want)
				}
			}
			q.Until, q.Cursor = cursors[1], cursors[1]
			if _, _, err := st.List(ctx, q); domain.ErrorCode(err) != domain.EInvalid {
				t.Errorf("cursor and until together: %v, want invalid", err)
			}
		})
	}
}
