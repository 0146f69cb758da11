package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// A contradiction is recorded only against a person's decision that says
// the opposite; it leaves the state and the decision as they are, and its
// audit event names both decisions and keeps the reference.
func TestDecide_Contradict(t *testing.T) {
	at := t0.Add(-time.Minute)
	op := domain.Operation{ID: "op_1", Namespace: "campaigns", Key: "evt_1:crm", Type: "crm.task.create", Version: 7,
		State: domain.Cancelled, Resolution: &domain.Resolution{Action: "confirm_not_executed+cancel", By: "omar@example.com",
			Reason: "no charge", At: at}}
	executed := domain.Contradict{Claim: domain.ResolveConfirmExecuted, Result: &domain.Result{Ref: "ch_1"}, Reason: "found it"}
	ch, err := domain.Decide(op, executed, newEnv(testCard(), t0, alice))
	if err != nil {
		t.Fatal(err)
	}
	checkAudit(t, op.AuditHead, op.Version, "cancelled", ch)
	ev := ch.Events[0]
	if ch.Op.State != domain.Cancelled || ch.Op.Resolution.By != "omar@example.com" || ev.Action != domain.ActionContradictionRecorded ||
		ev.ToState != "cancelled" || ev.Reason != "found it" {
		t.Fatalf("state %s, resolution %+v, event %s→%s %q", ch.Op.State, ch.Op.Resolution, ev.Action, ev.ToState, ev.Reason)
	}
	for _, want := range []string{`"claim":"confirm_executed"`, `"result_ref":"ch_1"`, `"contradicts":"confirm_not_executed+cancel"`, `"contradicts_by":"omar@example.com"`} {
		if !strings.Contains(string(ev.Detail), want) {
			t.Fatalf("detail %s lacks %s", ev.Detail, want)
		}
	}
	cs := domain.Contradictions(ch.Events)
	if len(cs) != 1 || cs[0].ResultRef != "ch_1" || cs[0].ContradictsBy != "omar@example.com" || !cs[0].ContradictsAt.Equal(at) {
		t.Fatalf("read back: %+v", cs)
	}

	refused := []struct {
		name string
		op   domain.Operation
		c    domain.Contradict
	}{
		{"agrees", op, domain.Contradict{Claim: domain.ResolveConfirmNotExecuted, Then: domain.ResolveCancel, Reason: "x"}},
		{"no person's decision", func() domain.Operation { o := op; o.Resolution = nil; return o }(), executed},
		{"retry is no claim", op, domain.Contradict{Claim: domain.ResolveRetry, Reason: "x"}},
		{"executed against executed", func() domain.Operation {
			o := op
			o.State, o.Resolution = domain.Completed, &domain.Resolution{Action: "confirm_executed", By: "omar@example.com"}
			return o
		}(), executed},
	}
	for _, r := range refused {
		if _, err := domain.Decide(r.op, r.c, newEnv(testCard(), t0, alice)); domain.ErrorCode(err) != domain.EInvalidTransition {
			t.Errorf("%s: %v, want invalid_transition", r.name, err)
		}
	}
	// Not executed against a confirmed execution is one too.
	done := op
	done.State, done.Resolution = domain.Completed, &domain.Resolution{Action: "confirm_executed", By: "omar@example.com"}
	if _, err := domain.Decide(done, domain.Contradict{Claim: domain.ResolveConfirmNotExecuted, Reason: "x"}, newEnv(testCard(), t0, alice)); err != nil {
		t.Fatalf("not executed against executed: %v", err)
	}
}
