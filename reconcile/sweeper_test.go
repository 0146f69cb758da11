package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store/storetest"
)

func card() domain.Cards {
	return domain.Cards{"crm.task.create": {Name: "crm.task.create", Provider: "crm", ProviderIdempotency: domain.IdempotencyNone,
		Lookup: domain.LookupManual, Retry: domain.RetryPolicy{MaxAttempts: 5, Backoff: time.Second, BackoffMax: time.Minute},
		Lease: 30 * time.Second}}
}

// TestSweepersOnSeveralReplicas runs three sweepers on one database, as three
// server processes would: every expired lease is acted on exactly once, in
// processing back to received, in action_pending to unknown_outcome.
func TestSweepersOnSeveralReplicas(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	ledger := domain.NewLedger(st, card())
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	var ids []string
	for i := range 30 {
		res, err := ledger.Workflow.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("k%d", i), Type: "crm.task.create",
			Content: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Claim: &domain.Claim{Worker: "w", Lease: time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 { // half of them reached the provider call
			if _, err := ledger.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: res.Claim.Lease.Token}); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, res.Operation.ID)
	}
	time.Sleep(1100 * time.Millisecond) // every lease runs out

	sweepCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// each replica has its own Ledger over the same database
			(&reconcile.Sweeper{Ledger: domain.NewLedger(st, card()).Upkeep, Interval: 20 * time.Millisecond, Batch: 7}).Run(sweepCtx)
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, id := range ids {
		for {
			op, err := ledger.Workflow.Get(ctx, wf, id)
			if err != nil {
				t.Fatal(err)
			}
			if !op.State.Leased() {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still %s: the sweepers did not act", id, op.State)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	stop()
	wg.Wait()
	for i, id := range ids {
		op, _ := ledger.Workflow.Get(ctx, wf, id)
		want := domain.Received
		if i%2 == 1 {
			want = domain.UnknownOutcome
		}
		if op.State != want {
			t.Errorf("%s is %s, want %s", id, op.State, want)
		}
		events, err := ledger.Workflow.Timeline(ctx, wf, id)
		if err != nil {
			t.Fatal(err)
		}
		expiries := 0
		for _, e := range events {
			if e.Action == "lease_expired" {
				expiries++
			}
		}
		if expiries != 1 {
			t.Errorf("%s has %d lease_expired events, want exactly 1", id, expiries)
		}
	}
}
