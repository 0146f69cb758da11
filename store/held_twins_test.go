package store_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestList_heldTwins: the queue marks the rows a held twin waits on with
// one list of the registrations awaiting approval as twin_unresolved. It
// names those and no other awaiting approval, and on PostgreSQL it reads
// them from their partial index (operations_twin_holds), not from a read
// of every operation: state is in no index of operations, and the queue
// asks on every page.
func TestList_heldTwins(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	cs := identityCards()
	approve := cs["crm.task.create"]
	approve.Name, approve.RequiresApproval = "crm.task.approved", true
	cs[approve.Name] = approve
	l := domain.NewLedger(s, cs)
	first := lostCall(t, l, "evt_1:pay", "order.pay", `{"order":"ord_7","amount":1200,"currency":"JPY"}`)
	var want []string
	for _, r := range []struct{ key, typ, content string }{
		{"evt_2:pay", "order.pay", `{"order":"ord_7","amount":1200,"currency":"JPY","note":"again"}`}, // held for first
		{"evt_3:approve", approve.Name, `{"owner":"u_1"}`},                                            // awaiting approval, no twin
		{"evt_4:pay", "order.pay", `{"order":"ord_8","amount":5,"currency":"JPY"}`},                   // no twin, no approval
	} {
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: r.key, Type: r.typ, Content: json.RawMessage(r.content)})
		if err != nil || !res.Created {
			t.Fatalf("register %s: %+v %v", r.key, res, err)
		}
		if e := res.Operation.LastError; e != nil && e.Code == domain.CodeTwinUnresolved {
			want = append(want, res.Operation.ID)
		}
	}
	if len(want) != 1 {
		t.Fatalf("held twins registered: %v, want one", want)
	}
	q := domain.ListQuery{States: []domain.State{domain.AwaitingApproval}, Limit: 200,
		Error: &domain.ErrorKind{Class: domain.ClassConflict.String(), Code: domain.CodeTwinUnresolved}}
	got, _, err := s.List(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != want[0] || !strings.Contains(got[0].LastError.Message, first.ID) {
		t.Fatalf("the held twins: %+v, want %s held for %s", got, want[0], first.ID)
	}
	if !storetest.Postgres() {
		return // the plan is PostgreSQL's
	}
	plan, err := store.ExplainList(s, q, "enable_seqscan = off")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "operations_twin_holds") || strings.Contains(plan, "Seq Scan on operations") ||
		strings.Contains(plan, "operations_list") {
		t.Fatalf("the held twins are not read from their index:\n%s", plan)
	}
}
