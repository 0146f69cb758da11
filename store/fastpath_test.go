package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestApply_staleChange: a change decided on a version the operation has
// moved past is refused with EConflict and writes nothing — not the row,
// not its attempt, not its audit events — with side rows or without.
func TestApply_staleChange(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_1:task", Type: "crm.task.create",
		Content: json.RawMessage(`{"a":1}`), Claim: &domain.Claim{Worker: "w1"}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Operation.ID
	begun, err := l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: 1})
	if err != nil {
		t.Fatal(err)
	}
	before, _, err := s.Load(ctx, "", id)
	if err != nil {
		t.Fatal(err)
	}
	timeline, _ := s.Timeline(ctx, id)
	attempts, _ := s.Attempts(ctx, id)

	stale := before
	stale.State, stale.Version, stale.AuditHead = domain.Completed, before.Version+1, "forged"
	bare := domain.Change{Op: stale, FromVersion: before.Version - 1}
	withSides := bare
	at := *attempts[0].BeganAt
	att := attempts[0]
	att.SettledAt, att.Outcome = &at, "completed"
	withSides.Attempt = &domain.AttemptChange{Attempt: att}
	ev := timeline[len(timeline)-1]
	ev.ID, ev.Seq, ev.PrevHash, ev.Action = "evt_stale", ev.Seq+1, ev.Hash, "settled"
	withSides.Events = []domain.AuditEvent{ev}

	for name, ch := range map[string]domain.Change{"no side rows": bare, "attempt and event": withSides} {
		if err := s.Apply(ctx, ch); domain.ErrorCode(err) != domain.EConflict {
			t.Fatalf("%s: stale apply err = %v, want conflict", name, err)
		}
		after, _, err := s.Load(ctx, "", id)
		if err != nil || !reflect.DeepEqual(after, before) {
			t.Fatalf("%s: the row changed:\n%+v\n%+v (%v)", name, after, before, err)
		}
		if tl, _ := s.Timeline(ctx, id); len(tl) != len(timeline) {
			t.Fatalf("%s: %d audit events, want %d", name, len(tl), len(timeline))
		}
		if as, _ := s.Attempts(ctx, id); !reflect.DeepEqual(as, attempts) {
			t.Fatalf("%s: attempts changed: %+v", name, as)
		}
	}
	// The same change at the right version is written.
	withSides.FromVersion = before.Version
	stale.AuditHead = ev.Hash
	withSides.Op = stale
	if err := s.Apply(ctx, withSides); err != nil {
		t.Fatalf("current apply: %v", err)
	}
	if after, _, _ := s.Load(ctx, "", id); after.State != domain.Completed || after.Version != begun.Version+1 {
		t.Fatalf("not written: %+v", after)
	}
	if as, _ := s.Attempts(ctx, id); as[0].Outcome != "completed" {
		t.Fatalf("attempt not settled: %+v", as)
	}
}
