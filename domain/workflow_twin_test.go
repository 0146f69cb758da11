package domain_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestRegister_twinFoundByTheWrite: the write of a registration looks for
// its open twin itself (domain.Change.NoOpenTwin). A second key with the
// content of one that is action_pending is written awaiting approval and
// names its twin, without a claim; once the first is settled, a third key
// with that content registers and is claimed as usual; other content is
// never held.
func TestRegister_twinFoundByTheWrite(t *testing.T) {
	ctx := context.Background()
	l := domain.NewLedger(storetest.New(t), testCards())
	content := json.RawMessage(`{"title":"twin","owner":"u_1"}`)
	register := func(key string, c json.RawMessage) domain.RegisterResult {
		t.Helper()
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create", Content: c,
			Claim: &domain.Claim{Worker: "w1", Begin: true}})
		if err != nil || !res.Created {
			t.Fatalf("register %s: %+v %v", key, res, err)
		}
		return res
	}
	first := register("evt_twin:a", content)
	if first.Claim == nil || first.Operation.State != domain.ActionPending {
		t.Fatalf("first: %s, claim %v", first.Operation.State, first.Claim)
	}
	held := register("evt_twin:b", content)
	if op := held.Operation; op.State != domain.AwaitingApproval || held.Claim != nil || op.LastError == nil ||
		op.LastError.Code != domain.CodeTwinUnresolved || !strings.Contains(op.LastError.Message, first.Operation.ID) {
		t.Fatalf("the twin of an action_pending operation: %s %+v, claim %v", op.State, op.LastError, held.Claim)
	}
	if other := register("evt_twin:c", json.RawMessage(`{"title":"other","owner":"u_1"}`)); other.Claim == nil {
		t.Fatalf("other content held: %s %+v", other.Operation.State, other.Operation.LastError)
	}
	if _, err := l.Workflow.Settle(ctx, wf, first.Operation.ID, domain.Settle{LeaseToken: first.Claim.Lease.Token,
		Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "crm_1"}}); err != nil {
		t.Fatal(err)
	}
	if after := register("evt_twin:d", content); after.Claim == nil || after.Operation.State != domain.ActionPending {
		t.Fatalf("after the twin completed: %s %+v", after.Operation.State, after.Operation.LastError)
	}
}

// TestRegister_twinWaitingForItsBegin: a twin is open before it begins.
// Two registrations of one content under different keys — the first only
// queued, or claimed for a begin of its own (the three-call form) — do not
// both execute: the second is held naming the first, without a claim, and
// stays held when the first begins and completes.
func TestRegister_twinWaitingForItsBegin(t *testing.T) {
	ctx := context.Background()
	l := domain.NewLedger(storetest.New(t), testCards())
	for _, c := range []struct {
		name  string
		claim *domain.Claim
		state domain.State
	}{{"queued", nil, domain.Received}, {"claimed", &domain.Claim{Worker: "w1"}, domain.Processing}} {
		content := json.RawMessage(`{"title":"twin before begin","owner":"` + c.name + `"}`)
		register := func(key string) domain.RegisterResult {
			t.Helper()
			res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create", Content: content, Claim: c.claim})
			if err != nil || !res.Created {
				t.Fatalf("register %s: %+v %v", key, res, err)
			}
			return res
		}
		first := register("evt_" + c.name + ":a")
		if first.Operation.State != c.state {
			t.Fatalf("%s: the first is %s", c.name, first.Operation.State)
		}
		held := register("evt_" + c.name + ":b")
		if op := held.Operation; op.State != domain.AwaitingApproval || held.Claim != nil || op.LastError == nil ||
			op.LastError.Code != domain.CodeTwinUnresolved || !strings.Contains(op.LastError.Message, first.Operation.ID) {
			t.Fatalf("%s: the twin of a %s operation: %s %+v, claim %v", c.name, c.state, op.State, op.LastError, held.Claim)
		}
		lease := first.Claim
		if lease == nil {
			cl, err := l.Workflow.Claim(ctx, wf, first.Operation.ID, domain.Claim{Worker: "w1"})
			if err != nil {
				t.Fatal(err)
			}
			lease = &cl
		}
		if _, err := l.Workflow.Begin(ctx, wf, first.Operation.ID, domain.Begin{LeaseToken: lease.Lease.Token}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Workflow.Settle(ctx, wf, first.Operation.ID, domain.Settle{LeaseToken: lease.Lease.Token,
			Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "crm_" + c.name}}); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Workflow.Claim(ctx, wf, held.Operation.ID, domain.Claim{Worker: "w2"}); domain.ErrorCode(err) != domain.ENotClaimable {
			t.Fatalf("%s: the held twin was claimable after its twin ran: %v", c.name, err)
		}
	}
}
