package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestIncident_countsEveryOpenItem: an incident's page lists its items up
// to a bound, but the states and twins it states of the incident are those
// of every open item, not only of the items listed.
func TestIncident_countsEveryOpenItem(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, identityCards())
	// First in: a timeout before the call began, which the worker says is final. Then a lost answer, whose
	// content a later registration under another key repeats (a held twin).
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_1:pay", Type: "order.pay",
		Content: json.RawMessage(`{"order":"ord_1","amount":5}`), Claim: &domain.Claim{Worker: "w1"}})
	if err != nil || res.Claim == nil {
		t.Fatalf("register: %+v %v", res, err)
	}
	if op, err := l.Workflow.Settle(ctx, wf, res.Operation.ID, domain.Settle{LeaseToken: res.Claim.Lease.Token,
		Outcome: domain.OutcomeFailedTerminal, Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}}); err != nil ||
		op.State != domain.FailedTerminal {
		t.Fatalf("settle: %s %v", op.State, err)
	}
	lost := lostCall(t, l, "evt_2:pay", "order.pay", `{"order":"ord_2","amount":7}`)
	held, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_3:pay", Type: "order.pay",
		Content: json.RawMessage(`{"order":"ord_2","amount":7}`)})
	if err != nil || held.Operation.LastError == nil || held.Operation.LastError.Code != domain.CodeTwinUnresolved {
		t.Fatalf("the twin: %+v %v", held.Operation, err)
	}
	all, err := s.Incidents(ctx)
	if err != nil || len(all) != 1 || all[0].OpenItems != 2 {
		t.Fatalf("incidents: %+v %v, want one of two open items", all, err)
	}
	for _, limit := range []int{10, 1} {
		in, items, _, err := s.Incident(ctx, all[0].ID, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(items) != min(limit, 2) {
			t.Fatalf("limit %d: %d items", limit, len(items))
		}
		if len(in.States) != 2 || in.Twins != 1 {
			t.Fatalf("limit %d (the page lists %s first): states %v, twins %d; want both states, the twin of %s",
				limit, items[0].State, in.States, in.Twins, lost.Key)
		}
	}
}
