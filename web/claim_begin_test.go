package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestDesk_BegunClaimOnTheTimeline: an operation claimed with begin (the
// two-call lifecycle) shows one timeline event for the claim and the begin,
// received → action pending, with the claim's worker and attempt; and the
// audit page offers that action as a filter and finds it.
func TestDesk_BegunClaimOnTheTimeline(t *testing.T) {
	d := newDesk(t)
	d.signedIn("ada", "aud")
	ctx := context.Background()
	op := d.register("evt_1:begun", "crm.task.create")
	cl, err := d.ledger.Workflow.Claim(ctx, testWorkflow, op.ID, domain.Claim{Worker: "w-fast", Begin: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ledger.Workflow.Settle(ctx, testWorkflow, op.ID, domain.Settle{LeaseToken: cl.Lease.Token, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}}); err != nil {
		t.Fatal(err)
	}
	p := d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)
	evs := p.all("timeline-event")
	if len(evs) != 3 || attr(evs[1], "data-action") != domain.ActionClaimedAndBegan {
		t.Fatalf("timeline: %d events", len(evs))
	}
	if got := text(evs[1]); !strings.Contains(got, "received → action pending") || !strings.Contains(got, "w-fast") {
		t.Fatalf("the begun claim reads %q", got)
	}
	a := d.get("aud", "/desk/audit?action="+domain.ActionClaimedAndBegan).want(http.StatusOK)
	rows := a.all("audit-row")
	if len(rows) != 1 || attr(rows[0], "data-action") != domain.ActionClaimedAndBegan {
		t.Fatalf("the audit page filtered by %s found %d rows", domain.ActionClaimedAndBegan, len(rows))
	}
	if !strings.Contains(a.body, `value="`+domain.ActionClaimedAndBegan+`"`) {
		t.Fatal("the audit page does not offer the action as a filter")
	}
}

// TestDesk_RegisteredWithClaimOnTheTimeline: a registration that claims and
// begins (the two-call lifecycle's first call) is one timeline event, named
// for all three, straight to action pending, with the claim's worker beside
// the registration's fingerprint; the audit page offers both registration
// actions as filters and finds it.
func TestDesk_RegisteredWithClaimOnTheTimeline(t *testing.T) {
	d := newDesk(t)
	d.signedIn("ada", "aud")
	ctx := context.Background()
	res, err := d.ledger.Workflow.Register(ctx, testWorkflow, domain.Registration{Key: "evt_1:fused", Type: "crm.task.create",
		Content: []byte(`{"title":"x"}`), Claim: &domain.Claim{Worker: "w-fast", Begin: true}})
	if err != nil || res.Claim == nil {
		t.Fatalf("register: %+v %v", res, err)
	}
	op := res.Operation
	if _, err := d.ledger.Workflow.Settle(ctx, testWorkflow, op.ID, domain.Settle{LeaseToken: res.Claim.Lease.Token, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}}); err != nil {
		t.Fatal(err)
	}
	p := d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)
	evs := p.all("timeline-event")
	if len(evs) != 2 || attr(evs[0], "data-action") != domain.ActionRegisteredAndBegan {
		t.Fatalf("timeline: %d events", len(evs))
	}
	if got := text(evs[0]); !strings.Contains(got, "→ action pending") || !strings.Contains(got, "w-fast") ||
		!strings.Contains(got, op.Fingerprint) || !strings.Contains(got, res.Claim.Attempt.ID) {
		t.Fatalf("the registration with its claim reads %q", got)
	}
	a := d.get("aud", "/desk/audit?action="+domain.ActionRegisteredAndBegan).want(http.StatusOK)
	if rows := a.all("audit-row"); len(rows) != 1 || attr(rows[0], "data-action") != domain.ActionRegisteredAndBegan {
		t.Fatalf("the audit page filtered by %s found %d rows", domain.ActionRegisteredAndBegan, len(rows))
	}
	for _, action := range []string{domain.ActionRegisteredAndBegan, domain.ActionRegisteredAndClaimed} {
		if !strings.Contains(a.body, `value="`+action+`"`) {
			t.Fatalf("the audit page does not offer %s as a filter", action)
		}
	}
}
