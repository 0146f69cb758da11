package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestDesk_DuplicatePaths: the Types page says what the retry layer, the
// twins rule, the provider's concurrency and a key_and_params provider do;
// a twin is marked in the queue and named on the approvals page; the
// operation page says which provider key the next attempt sends and why.
func TestDesk_DuplicatePaths(t *testing.T) {
	cards := testCards()
	crm := cards["crm.task.create"]
	crm.RetryLayer, crm.ProviderConcurrency = domain.RetryByWorker, domain.ConcurrencyRejects
	cards[crm.Name] = crm
	coupon := cards["coupon.issue"]
	coupon.ProviderIdempotency, coupon.ProviderKeyRetention = domain.IdempotencyKeyAndParams, 24*3600e9
	cards[coupon.Name] = coupon
	d := newDeskWith(t, cards)

	p := d.get("vic", "/desk/types").want(http.StatusOK)
	page := text(p.doc)
	for _, want := range []string{"Handoff schedules no retry on top", "worker_retries_exhausted", "refuses a re-send under the same key with changed parameters",
		"rejects", "twins", "The same content under another key waits for a person"} {
		if !strings.Contains(page, want) {
			t.Fatalf("the Types page does not say %q", want)
		}
	}

	ctx := context.Background()
	first := d.intoDesk("evt_1:crm_task", true) // unknown_outcome
	res, err := d.ledger.Workflow.Register(ctx, testWorkflow, domain.Registration{Key: "evt_1:crm_task-again", Type: "crm.task.create",
		Content: first.Content})
	if err != nil || res.Operation.State != domain.AwaitingApproval {
		t.Fatalf("twin: %+v %v", res.Operation, err)
	}
	ap := d.get("ada", "/desk/approvals").want(http.StatusOK)
	if got := text(ap.doc); !strings.Contains(got, "twin_unresolved") || !strings.Contains(got, first.ID) {
		t.Fatalf("the approvals page does not name the twin: %s", got)
	}
	q := d.get("ada", "/desk/queue").want(http.StatusOK)
	if marks := q.all("row-twin"); len(marks) != 1 || !strings.Contains(attr(marks[0], "title"), "evt_1:crm_task-again") {
		t.Fatalf("the queue does not flag the item a twin waits on: %d marks", len(marks))
	}
	op := d.get("ada", "/desk/operations/"+first.ID).want(http.StatusOK)
	if use := op.all("provider-key-use"); len(use) != 1 || !strings.Contains(text(use[0]), first.ProviderKey) {
		t.Fatalf("the operation page does not say which provider key is used: %v", use)
	}
}
