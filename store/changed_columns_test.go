package store_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestApply_writesWhatWasDecided: after each transition of two lifecycles
// — a heartbeat, begins, a settle with a result and one with a terminal
// error — the operation read back is exactly the one the Ledger decided.
// On PostgreSQL an update writes only the columns that differ from the
// operation it was decided on (changedCols), in one statement or in a
// multi-row one; a changed column left unwritten shows here.
func TestApply_writesWhatWasDecided(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	same := func(step string, decided domain.Operation, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		loaded, _, err := s.Load(ctx, "", decided.ID)
		if err != nil || !reflect.DeepEqual(decided, loaded) {
			t.Fatalf("%s: decided and loaded differ (%v):\n%#v\n%#v", step, err, decided, loaded)
		}
	}
	a := registerClaimed(t, l, "evt_cols:a")
	op, err := l.Workflow.Heartbeat(ctx, wf, a.ID, domain.Heartbeat{LeaseToken: 1, Lease: time.Minute})
	same("heartbeat", op, err)
	op, err = l.Workflow.Begin(ctx, wf, a.ID, domain.Begin{LeaseToken: 1})
	same("begin", op, err)
	op, err = l.Workflow.Settle(ctx, wf, a.ID, domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeCompleted,
		Result: &domain.Result{Ref: "crm_a"}})
	same("settle completed", op, err)

	b := registerClaimed(t, l, "evt_cols:b")
	op, err = l.Workflow.Begin(ctx, wf, b.ID, domain.Begin{LeaseToken: 1})
	same("begin", op, err)
	op, err = l.Workflow.Settle(ctx, wf, b.ID, domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeFailedTerminal,
		Error: &domain.ErrorInfo{Class: domain.ClassValidation, Code: "E_DENIED", Message: "denied"}})
	same("settle failed terminal", op, err)
}
