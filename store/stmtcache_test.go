package store

import (
	"testing"
	"time"
)

// Plans that differ only in a part of their shape — the attempt's set
// columns or its key, the guard, the events — each get their own text:
// under verifyStatementCache a plan served another shape's text panics.
func TestStatementCache_shapes(t *testing.T) {
	now := time.Now()
	cols := []col{{"state", "text", "action_pending"}, {"version", "bigint", int64(3)}}
	attempt := func(set ...col) *childWrite {
		return &childWrite{key: []col{{"operation_id", "text", "op_1"}, {"number", "integer", 1}}, set: set}
	}
	plans := []writePlan{
		{cols: cols, guard: casGuard{id: "op_1", version: 2}, attempt: attempt(col{"began_at", "timestamptz", now})},
		{cols: cols, guard: casGuard{id: "op_1", version: 2}, attempt: attempt(col{"settled_at", "timestamptz", now})},
		{cols: cols, guard: casGuard{id: "op_1", version: 2}, attempt: attempt(col{"settled_at", "timestamptz", now},
			col{"outcome", "text", "completed"})},
		{cols: cols, guard: casGuard{id: "op_1", version: 2, checkContent: true, contentVersion: 1}},
		{cols: cols, guard: casGuard{id: "op_1", version: 2, liveLease: true}},
		{cols: cols, guard: casGuard{id: "op_1", version: 2}},
		{cols: cols, guard: casGuard{id: "op_1", version: 2}, events: make([]auditRow, 1)},
		{cols: cols, guard: casGuard{id: "op_1", version: 2}, events: make([]auditRow, 2)},
	}
	for range 2 { // the second time round, every text comes from the cache
		for i := range plans {
			p := &plans[i]
			got := singleStatement(p)
			if want := renderSingle(p); got.query() != want.sql.String() {
				t.Fatalf("plan %d: %s\nwant %s", i, got.query(), want.sql.String())
			}
		}
	}
}
