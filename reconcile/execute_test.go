package reconcile_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/execute"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestRetrier_OnlyHandoffRetries: with retry_layer handoff the retry loop
// makes a due call itself — a 429's retry, and an operation received
// again; with retry_layer worker it never calls.
func TestRetrier_OnlyHandoffRetries(t *testing.T) {
	var calls, refuse atomic.Int64
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if refuse.Add(-1) >= 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		_, _ = w.Write([]byte(`{"id": "ref_1"}`))
	}))
	defer provider.Close()
	a := &domain.ExecuteAdapter{Method: "POST", URL: provider.URL + "/x", Body: domain.ExecuteBodyContent,
		Timeout: time.Second, CompletedStatus: []int{200}, CompletedRef: "/id"}
	byHandoff := domain.Card{Name: "by.handoff", Provider: "p", ProviderIdempotency: domain.IdempotencyNone, Lookup: domain.LookupNone,
		Retry:     domain.RetryPolicy{MaxAttempts: 5, Backoff: 10 * time.Millisecond, BackoffMax: 10 * time.Millisecond},
		Retryable: []domain.ErrorClass{domain.ClassRateLimited, domain.ClassTransient}, Lease: 30 * time.Second,
		RetryLayer: domain.RetryByHandoff, ExecuteAdapter: a, TwinsAllowed: true}
	byWorker := byHandoff
	byWorker.Name, byWorker.RetryLayer = "by.worker", domain.RetryByWorker
	ledger := domain.NewLedger(storetest.New(t), domain.Cards{byHandoff.Name: byHandoff, byWorker.Name: byWorker})
	x := &execute.Executor{Workflow: ledger.Workflow, Caller: execute.NewCaller(true, nil), Worker: "replica-1"}
	r := &reconcile.Retrier{Upkeep: ledger.Upkeep, Executor: x, Types: []string{"by.handoff", "by.worker"}}
	ctx := context.Background()
	actor := domain.Actor{Kind: domain.ActorWorkflow, Name: "flow", Namespace: "ns"}

	refuse.Store(1)
	run, err := x.Start(ctx, actor, "by.handoff", domain.ExecuteInput{Key: "k-429", Content: json.RawMessage(`{"n":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	<-run.Done
	received := map[string]string{}
	for _, typ := range []string{"by.handoff", "by.worker"} {
		res, err := ledger.Workflow.Register(ctx, actor, domain.Registration{Key: "k-" + typ, Type: typ, Content: json.RawMessage(`{"t":"` + typ + `"}`)})
		if err != nil || res.Operation.State != domain.Received {
			t.Fatalf("%s: %+v %v", typ, res.Operation.State, err)
		}
		received[typ] = res.Operation.ID
	}
	if n, err := r.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("before the 429's retry is due: %d started, %v; want the received by.handoff only", n, err)
	}
	time.Sleep(1100 * time.Millisecond) // the 429's Retry-After
	if n, err := r.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("once due: %d started, %v", n, err)
	}
	for id, want := range map[string]domain.State{run.Operation.ID: domain.Completed, received["by.handoff"]: domain.Completed,
		received["by.worker"]: domain.Received} {
		op, err := ledger.Workflow.Get(ctx, actor, id)
		if err != nil || op.State != want {
			t.Errorf("%s (%s): %s %v, want %s", op.Key, op.Type, op.State, err, want)
		}
	}
	if calls.Load() != 3 {
		t.Fatalf("the provider was called %d times, want 3 (the 429, its retry, the received by.handoff)", calls.Load())
	}
}
