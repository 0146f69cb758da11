package domain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

func TestDesk_ItemAndApprovals(t *testing.T) {
	ctx := context.Background()
	l := domain.NewLedger(storetest.New(t), testCards())
	// Two coupons wait for approval before the failure below is revised:
	// the revision is the newest thing to approve, so it comes first.
	for i := range 2 {
		if _, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("evt_c:%d", i), Type: "coupon.issue",
			Content: json.RawMessage(fmt.Sprintf(`{"c":%d}`, i))}); err != nil {
			t.Fatal(err)
		}
	}
	a := intoDesk(t, l, "evt_desk:a", true)
	b := intoDesk(t, l, "evt_desk:b", false)
	it, err := l.Desk.DeskItem(ctx, ada, a.ID)
	if err != nil || it.Op.ID != a.ID || len(it.Attempts) != 1 || len(it.Timeline) < 3 || len(it.Versions) != 1 ||
		it.Card.Provider != "acme-crm" || it.Now.IsZero() {
		t.Fatalf("item: %+v %v", it, err)
	}
	if len(it.Related) != 1 || it.Related[0].ID != b.ID {
		t.Fatalf("related: %+v", it.Related)
	}
	other := ada
	other.Email = "bob@example.com"
	if _, err := l.Desk.Revise(ctx, other, b.ID, domain.Revise{Content: json.RawMessage(`{"a":2}`), Reason: "fix owner",
		ExpectedVersion: b.Version}); err != nil {
		t.Fatal(err)
	}
	pend, next, err := l.Desk.PendingApprovals(ctx, ada, 2, "")
	if err != nil || len(pend) != 2 || next == "" {
		t.Fatalf("approvals page 1: %+v %q %v", pend, next, err)
	}
	if p := pend[0]; p.Op.ID != b.ID || p.Current.Version != 2 || p.Previous == nil || p.Previous.Version != 1 ||
		p.Current.CreatedBy != "bob@example.com" {
		t.Fatalf("revised item: %+v", p)
	}
	if pend[1].Previous != nil || pend[1].Current.Version != 1 || pend[1].Op.Key != "evt_c:1" {
		t.Fatalf("unrevised item: %+v", pend[1])
	}
	rest, next, err := l.Desk.PendingApprovals(ctx, ada, 2, next)
	if err != nil || len(rest) != 1 || next != "" || rest[0].Op.Key != "evt_c:0" {
		t.Fatalf("approvals page 2: %+v %q %v", rest, next, err)
	}
}

var ada = domain.Actor{Kind: domain.ActorPerson, Name: "Ada", Email: "ada@example.com", Role: domain.RoleApprover}

// intoDesk registers an operation and settles its first attempt: unknown
// after begin, or a terminal validation error before it.
func intoDesk(t *testing.T, l *domain.Ledger, key string, unknown bool) domain.Operation {
	t.Helper()
	ctx := context.Background()
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create", EventID: "evt_desk",
		Content: json.RawMessage(`{"a":"` + key + `"}`), Claim: &domain.Claim{Worker: "w1"}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Operation.ID
	settle := domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeFailedTerminal,
		Error: &domain.ErrorInfo{Class: domain.ClassValidation, Message: "bad owner"}}
	if unknown {
		if _, err := l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: 1}); err != nil {
			t.Fatal(err)
		}
		settle.Outcome, settle.Error = domain.OutcomeUnknown, &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}
	}
	op, err := l.Workflow.Settle(ctx, wf, id, settle)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

var (
	operator = domain.Actor{Kind: domain.ActorPerson, Name: "olga", Email: "olga@example.com", Role: domain.RoleOperator}
	approver = domain.Actor{Kind: domain.ActorPerson, Name: "ari", Email: "ari@example.com", Role: domain.RoleApprover}
)
