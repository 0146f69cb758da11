package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestList_OperationsSearchNamesManyExactly: a correlation ID that a run
// of more than a thousand operations shares finds every one of them on the
// Operations page — in its total and page after page — not the first
// thousand the exact lookup reads at once.
func TestList_OperationsSearchNamesManyExactly(t *testing.T) {
	s := storetest.New(t)
	ctx := context.Background()
	ids := &domain.IDSource{}
	const many = 1_050
	now := time.Now().UTC().Truncate(time.Second)
	var changes []domain.Change
	for i := range many {
		env := domain.Env{Card: testCards()["crm.task.create"], Now: now, Actor: wf, NewID: ids.New}
		ch, err := domain.NewOperation(domain.Registration{Namespace: wf.Namespace, Key: fmt.Sprintf("run-%04d", i),
			Type: "crm.task.create", CorrelationID: "Run-2026-12-07"}, []byte(`{"a":1}`), false, env)
		if err != nil {
			t.Fatal(err)
		}
		changes = append(changes, ch)
	}
	if err := s.CreateBatch(ctx, changes); err != nil {
		t.Fatal(err)
	}
	q := domain.ListQuery{Namespace: wf.Namespace, Text: "run-2026-12-07", Deep: true}
	if n, err := s.Total(ctx, q, 5_000); err != nil || n != many {
		t.Errorf("total of the search: %d, %v; want %d", n, err, many)
	}
	seen := map[string]bool{}
	for page := 0; page < 20; page++ {
		q.Limit = 200
		ops, next, err := s.List(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			seen[op.ID] = true
		}
		if next == "" {
			break
		}
		q.Cursor = next
	}
	if len(seen) != many {
		t.Errorf("the pages of the search hold %d operations, want %d", len(seen), many)
	}
}
