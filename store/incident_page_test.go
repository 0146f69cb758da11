package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestIncident_countsEveryOpenItem: an incident's page lists its items up
// to a bound, but the states and twins it states of the incident are those
// of every open item, not only of the items listed; so does the list.
func TestIncident_countsEveryOpenItem(t *testing.T) {
	ctx := context.Background()
	s, _, _, lost := twoStateIncident(t)
	all, err := s.Incidents(ctx)
	if err != nil || len(all) != 1 || all[0].OpenItems != 2 {
		t.Fatalf("incidents: %+v %v, want one of two open items", all, err)
	}
	if len(all[0].States()) != 2 || all[0].Twins != 1 {
		t.Fatalf("the list: states %v, twins %d; want both states, the twin of %s", all[0].States(), all[0].Twins, lost.Key)
	}
	for _, limit := range []int{10, 1} {
		in, items, _, err := s.Incident(ctx, all[0].ID, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != min(limit, 2) {
			t.Fatalf("limit %d: %d items", limit, len(items))
		}
		if len(in.States()) != 2 || in.Twins != 1 {
			t.Fatalf("limit %d (the page lists %s first): states %v, twins %d; want both states, the twin of %s",
				limit, items[0].State, in.States(), in.Twins, lost.Key)
		}
	}
}

// TestIncident_statesFollowTheItemsLeaving: an incident's states and
// twins are those of the items still open: when its failed item is decided
// it is of unknown outcomes only, and when the last is confirmed not done
// and sent to run again — open still, its twin still held, but off the
// desk — of none, and no twin waits on its items.
func TestIncident_statesFollowTheItemsLeaving(t *testing.T) {
	ctx := context.Background()
	s, l, first, lost := twoStateIncident(t)
	decide := func(op domain.Operation, r domain.Resolve) {
		t.Helper()
		op, _, err := s.Load(ctx, "", op.ID)
		if err != nil {
			t.Fatal(err)
		}
		r.Reason, r.ExpectedVersion = "decided", op.Version
		if _, err := l.Desk.Resolve(ctx, triager, op.ID, r); err != nil {
			t.Fatal(err)
		}
	}
	incident := func() domain.Incident {
		t.Helper()
		all, err := s.Incidents(ctx)
		if err != nil || len(all) != 1 {
			t.Fatalf("incidents: %+v %v", all, err)
		}
		in, _, _, err := s.Incident(ctx, all[0].ID, 10)
		if err != nil || !slices.Equal(in.States(), all[0].States()) {
			t.Fatalf("the page's states %v, the list's %v (%v)", in.States(), all[0].States(), err)
		}
		return in
	}
	decide(first, domain.Resolve{Action: domain.ResolveCancel})
	if in := incident(); in.OpenItems != 1 || !slices.Equal(in.States(), []domain.State{domain.UnknownOutcome}) {
		t.Fatalf("the failed item decided: %d open, states %v; want the unknown outcome's only", in.OpenItems, in.States())
	}
	decide(lost, domain.Resolve{Action: domain.ResolveConfirmNotExecuted, Then: domain.ResolveRetry})
	if in := incident(); in.OpenItems != 0 || len(in.States()) != 0 || in.Twins != 0 || in.Status != domain.IncidentResolved {
		t.Fatalf("every item decided: %d open, states %v, twins %d, %s", in.OpenItems, in.States(), in.Twins, in.Status)
	}
}

// twoStateIncident makes an incident of two open items in different
// states: first a timeout before the call began, which the worker says is
// final; then a lost answer, whose content a later registration under
// another key repeats (a held twin).
func twoStateIncident(t *testing.T) (*store.Store, *domain.Ledger, domain.Operation, domain.Operation) {
	t.Helper()
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, identityCards())
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_1:pay", Type: "order.pay",
		Content: json.RawMessage(`{"order":"ord_1","amount":5}`), Claim: &domain.Claim{Worker: "w1"}})
	if err != nil || res.Claim == nil {
		t.Fatalf("register: %+v %v", res, err)
	}
	first, err := l.Workflow.Settle(ctx, wf, res.Operation.ID, domain.Settle{LeaseToken: res.Claim.Lease.Token,
		Outcome: domain.OutcomeFailedTerminal, Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}})
	if err != nil || first.State != domain.FailedTerminal {
		t.Fatalf("settle: %s %v", first.State, err)
	}
	lost := lostCall(t, l, "evt_2:pay", "order.pay", `{"order":"ord_2","amount":7}`)
	held, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_3:pay", Type: "order.pay",
		Content: json.RawMessage(`{"order":"ord_2","amount":7}`)})
	if err != nil || held.Operation.LastError == nil || held.Operation.LastError.Code != domain.CodeTwinUnresolved {
		t.Fatalf("the twin: %+v %v", held.Operation, err)
	}
	return s, l, first, lost
}
