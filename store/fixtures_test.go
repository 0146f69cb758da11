package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// The fixtures of the store's tests that drive a ledger over it; the
// ledger's own use cases are tested beside them in domain/.

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

var person = domain.Actor{Kind: domain.ActorPerson, Name: "Ada", Email: "ada@example.com", Role: domain.RoleApprover}

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
