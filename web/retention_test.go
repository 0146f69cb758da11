package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// completed registers key and drives it to completed with a result.
func (d *desk) completed(key string) domain.Operation {
	d.t.Helper()
	ctx := context.Background()
	op := d.register(key, "crm.task.create")
	cl, err := d.ledger.Workflow.Claim(ctx, testWorkflow, op.ID, domain.Claim{Worker: "w1"})
	if err != nil {
		d.t.Fatal(err)
	}
	if _, err := d.ledger.Workflow.Begin(ctx, testWorkflow, op.ID, domain.Begin{LeaseToken: cl.Lease.Token}); err != nil {
		d.t.Fatal(err)
	}
	op, err = d.ledger.Workflow.Settle(ctx, testWorkflow, op.ID, domain.Settle{LeaseToken: cl.Lease.Token, Outcome: domain.OutcomeCompleted,
		Result: &domain.Result{Ref: "task_7", Data: json.RawMessage(`{"owner":"u_9"}`)}})
	if err != nil {
		d.t.Fatal(err)
	}
	return op
}

// TestDesk_ContentPurged: once content retention purged an operation, its
// page says "Content purged on DATE" and keeps the hash, and the snapshot
// download says the content is gone.
func TestDesk_ContentPurged(t *testing.T) {
	d := newDesk(t)
	op := d.completed("evt_1:crm_task")
	later := domain.NewLedger(d.store, testCards())
	later.Now = func() time.Time { return time.Now().Add(48 * time.Hour) }
	if n, err := later.Upkeep.PurgeContent(context.Background(), 24*time.Hour, 10); err != nil || n != 1 {
		t.Fatalf("purged %d: %v", n, err)
	}
	p := d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)
	today := time.Now().UTC().Format("2006-01-02")
	if got := p.text("content-purged"); !strings.Contains(got, "Content purged on "+today) {
		t.Fatalf("purge notice: %q", got)
	}
	p.none("content-json")
	if p.text("content-hash") != op.ContentSHA256 || strings.Contains(p.body, "u_9") {
		t.Fatalf("hash missing or content still shown")
	}
	if got := d.get("ada", "/desk/operations/"+op.ID+"/content/1.json").want(http.StatusNotFound); !strings.Contains(got.body, "purged on "+today) {
		t.Fatalf("download of purged content: %s", got.body)
	}
}
