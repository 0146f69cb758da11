package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestContentRetention: three replicas' purgers empty the content and
// result data of final operations older than the retention, and only
// theirs; key, fingerprint, hashes and result ref stay, so a replay still
// deduplicates and returns the ref, a redelivered event is still known, and
// the audit trail still verifies.
func TestContentRetention(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	ledger := domain.NewLedger(st, card())
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	content := json.RawMessage(`{"email":"ada@example.com","n":1}`)

	// One completed operation, from an event; one still waiting.
	ev, err := ledger.Workflow.RegisterEvent(ctx, wf, domain.EventRegistration{EventID: "evt_1",
		Actions: []domain.EventAction{{Action: "task", Type: "crm.task.create", Content: content}}})
	if err != nil {
		t.Fatal(err)
	}
	done := ev.Operations[0]
	cl, err := ledger.Workflow.Claim(ctx, wf, done.ID, domain.Claim{Worker: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Workflow.Begin(ctx, wf, done.ID, domain.Begin{LeaseToken: cl.Lease.Token}); err != nil {
		t.Fatal(err)
	}
	if _, err := ledger.Workflow.Settle(ctx, wf, done.ID, domain.Settle{LeaseToken: cl.Lease.Token, Outcome: domain.OutcomeCompleted,
		Result: &domain.Result{Ref: "task_42", Data: json.RawMessage(`{"owner":"ada@example.com"}`)}}); err != nil {
		t.Fatal(err)
	}
	waiting, err := ledger.Workflow.Register(ctx, wf, domain.Registration{Key: "waiting", Type: "crm.task.create", Content: content})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := ledger.Workflow.Get(ctx, wf, done.ID)

	// Nothing is old enough yet.
	(&reconcile.ContentPurger{Ledger: ledger.Upkeep, Retention: time.Hour}).Tick(ctx)
	if op, _ := ledger.Workflow.Get(ctx, wf, done.ID); op.ContentPurgedAt != nil || !bytes.Equal(op.Content, before.Content) {
		t.Fatalf("purged before its time: %+v", op)
	}

	// An hour and a bit later, three replicas purge at once.
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			later := domain.NewLedger(st, card())
			later.Now = func() time.Time { return time.Now().Add(61 * time.Minute) }
			(&reconcile.ContentPurger{Ledger: later.Upkeep, Retention: time.Hour}).Tick(ctx)
		})
	}
	wg.Wait()

	op, err := ledger.Workflow.Get(ctx, wf, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	if op.ContentPurgedAt == nil || len(op.Content) != 0 || op.Result == nil || op.Result.Ref != "task_42" || len(op.Result.Data) != 0 {
		t.Fatalf("after the purge: content %q, purged %v, result %+v", op.Content, op.ContentPurgedAt, op.Result)
	}
	if op.Key != before.Key || op.Fingerprint != before.Fingerprint || op.ContentSHA256 != before.ContentSHA256 || op.Version != before.Version {
		t.Fatalf("the purge changed what must stay: %+v", op)
	}
	vs, err := ledger.Workflow.ContentVersions(ctx, wf, done.ID)
	if err != nil || len(vs) != 1 || len(vs[0].Content) != 0 || vs[0].SHA256 != before.ContentSHA256 {
		t.Fatalf("content versions: %+v %v", vs, err)
	}
	if w, _ := ledger.Workflow.Get(ctx, wf, waiting.Operation.ID); w.ContentPurgedAt != nil || !bytes.Equal(w.Content, waiting.Operation.Content) {
		t.Fatalf("an operation that is not final was purged: %+v", w)
	}

	// A redelivered event and a replayed registration still deduplicate.
	again, err := ledger.Workflow.RegisterEvent(ctx, wf, domain.EventRegistration{EventID: "evt_1",
		Actions: []domain.EventAction{{Action: "task", Type: "crm.task.create", Content: content}}})
	if err != nil || again.Created || len(again.Operations) != 1 || again.Operations[0].Result.Ref != "task_42" {
		t.Fatalf("redelivered event: %+v %v", again, err)
	}
	if bytes.Contains(mustJSON(t, again.Event.Actions), []byte("ada@example.com")) {
		t.Fatalf("the event still holds the content: %s", mustJSON(t, again.Event.Actions))
	}
	replay, err := ledger.Workflow.Register(ctx, wf, domain.Registration{Key: done.Key, Type: "crm.task.create", Content: content})
	if err != nil || replay.Created || replay.Operation.ID != done.ID || replay.Operation.Result.Ref != "task_42" {
		t.Fatalf("replay: %+v %v", replay, err)
	}
	if _, err := ledger.Workflow.Register(ctx, wf, domain.Registration{Key: done.Key, Type: "crm.task.create",
		Content: json.RawMessage(`{"n":2}`)}); domain.ErrorCode(err) != domain.EFingerprint {
		t.Fatalf("different content under the purged key: %v", err)
	}

	rep, err := audit.NewTrail(st).VerifyDB(ctx, &audit.Verifier{})
	if err != nil || !rep.OK() {
		t.Fatalf("audit trail after the purge: %+v %v", rep, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
