package domain_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

func TestLedger_Lifecycle(t *testing.T) {
	ctx := context.Background()
	l := domain.NewLedger(storetest.New(t), testCards())
	reg := domain.Registration{Key: "evt_1:task", Type: "crm.task.create", Content: json.RawMessage(`{"b":1.0,"a":"x"}`),
		Claim: &domain.Claim{Worker: "w1"}}
	res, err := l.Workflow.Register(ctx, wf, reg)
	if err != nil || !res.Created || res.Claim == nil {
		t.Fatalf("register: %+v %v", res, err)
	}
	op := res.Operation
	if op.State != domain.Processing || res.Claim.Lease.Token != 1 || string(op.Content) != `{"a":"x","b":1}` {
		t.Fatalf("registered: %+v", op)
	}
	if _, err := l.Workflow.Begin(ctx, wf, op.ID, domain.Begin{LeaseToken: 1}); err != nil {
		t.Fatal(err)
	}
	done, err := l.Workflow.Settle(ctx, wf, op.ID, domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "crm_1"}})
	if err != nil || done.State != domain.Completed {
		t.Fatalf("settle: %+v %v", done, err)
	}
	again, err := l.Workflow.Register(ctx, wf, reg)
	if err != nil || again.Created || again.Operation.Result == nil || again.Operation.Result.Ref != "crm_1" {
		t.Fatalf("replay: %+v %v", again, err)
	}
	if domain.ErrorCode(again.ClaimRefused) != domain.ENotClaimable || again.ClaimRefused.Reason != domain.RefusedCompleted {
		t.Fatalf("replay claim: %+v", again.ClaimRefused)
	}
	events, err := l.Workflow.Timeline(ctx, wf, op.ID)
	if err != nil || len(events) != 3 || events[0].Action != domain.ActionRegisteredAndClaimed ||
		events[1].Action != "began" || events[2].Action != "settled" {
		t.Fatalf("timeline: %d %v", len(events), err)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.Hash != domain.HashEvent(e) || (i > 0 && e.PrevHash != events[i-1].Hash) {
			t.Fatalf("event %d breaks the chain: %+v", i, e)
		}
	}
	atts, err := l.Workflow.Attempts(ctx, wf, op.ID)
	if err != nil || len(atts) != 1 || atts[0].BeganAt == nil || atts[0].SettledAt == nil || atts[0].Outcome != "completed" {
		t.Fatalf("attempts: %+v %v", atts, err)
	}
	reg.Content = json.RawMessage(`{"a":"y"}`)
	if _, err := l.Workflow.Register(ctx, wf, reg); domain.ErrorCode(err) != domain.EFingerprint {
		t.Fatalf("different content: %v", err)
	}
	other := wf
	other.Namespace = "other"
	if _, err := l.Workflow.Get(ctx, other, op.ID); domain.ErrorCode(err) != domain.ENotFound {
		t.Fatalf("other namespace: %v", err)
	}
}

func testCards() domain.Cards {
	base := domain.Card{Name: "crm.task.create", Provider: "acme-crm", ProviderIdempotency: domain.IdempotencyNone,
		Lookup: domain.LookupManual, Retry: domain.RetryPolicy{MaxAttempts: 3, MaxElapsed: time.Hour, Backoff: time.Second, BackoffMax: time.Minute},
		Retryable: []domain.ErrorClass{domain.ClassTransient, domain.ClassRateLimited},
		Terminal:  []domain.ErrorClass{domain.ClassValidation, domain.ClassAuth}, Lease: 30 * time.Second}
	approval := base
	approval.Name, approval.RequiresApproval = "coupon.issue", true
	// A provider that deduplicates by key for five minutes: a doubtful
	// outcome inside that window is re-sent under the same key.
	dedup := base
	dedup.Name, dedup.Provider, dedup.ProviderIdempotency, dedup.ProviderKeyRetention = "mail.send", "mailer", domain.IdempotencyKey, 5*time.Minute
	return domain.Cards{base.Name: base, approval.Name: approval, dedup.Name: dedup}
}

var wf = domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "campaigns"}
