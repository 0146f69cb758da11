package reconcile_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestSweepHandsOnALapsedResendGuard: a lease lost after begin on a
// provider that deduplicates by key is re-sent by the system policy
// (failed_retryable, guarded). When nobody claims it before the key's
// retention ends, the re-send is no longer safe: the next sweep, not the
// next claim, moves it to unknown_outcome — on the desk, or first to the
// lookup where the card has an adapter.
func TestSweepHandsOnALapsedResendGuard(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	clk := &clock{now: time.Now().UTC().Truncate(time.Microsecond)}
	if !storetest.Postgres() {
		st.SetClock(clk.Now)
	}
	// On PostgreSQL the clock is the database's: the lease and the
	// retention leave room for a slow machine between the steps.
	const lease, retention = time.Second, 4 * time.Second
	cards := dedupCards()
	lapse := cards["mail.send"]
	lapse.Name, lapse.ProviderKeyRetention = "mail.lapse", retention
	lapse.Retry.Backoff, lapse.Retry.BackoffMax = time.Hour, time.Hour // nobody claims it meanwhile
	looked := lapse
	looked.Name, looked.Lookup = "mail.lapse.looked", domain.LookupAPI
	looked.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: "https://mail.example.com/v1/messages/{provider_key}",
		Found: domain.LookupFound{Status: []int{200}, Ref: "/id"}, NotFoundStatus: []int{404}}
	cards[lapse.Name], cards[looked.Name] = lapse, looked
	ledger := domain.NewLedger(st, cards)
	ledger.Now = clk.Now
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}

	ops := map[string]domain.Operation{}
	for _, typ := range []string{lapse.Name, looked.Name} {
		res, err := ledger.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_1:" + typ, Type: typ,
			Content: json.RawMessage(`{"type":"` + typ + `"}`), Claim: &domain.Claim{Worker: "w-1", Lease: lease}})
		if err != nil {
			t.Fatal(err)
		}
		if ops[typ], err = ledger.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: res.Claim.Lease.Token}); err != nil {
			t.Fatal(err)
		}
	}
	clk.wait(lease + 200*time.Millisecond) // the worker is gone
	if _, err := ledger.Upkeep.Sweep(ctx, 100); err != nil {
		t.Fatal(err)
	}
	for typ, op := range ops {
		got, err := ledger.Workflow.Get(ctx, wf, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != domain.FailedRetryable || got.LastError == nil || got.LastError.Code != domain.CodeResendGuarded {
			t.Fatalf("%s after the lease lapsed: %s %+v; want re-sent under the guard", typ, got.State, got.LastError)
		}
	}

	until := ops[lapse.Name].ProviderKeyFirstSentAt.Add(retention)
	clk.wait(time.Until(until) + 100*time.Millisecond) // the retention ends; nobody claims
	if storetest.Postgres() {
		time.Sleep(100 * time.Millisecond) // a margin for the database's clock
	}
	if _, err := ledger.Upkeep.Sweep(ctx, 100); err != nil { // one sweep
		t.Fatal(err)
	}
	for typ, op := range ops {
		got, err := ledger.Workflow.Get(ctx, wf, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.State != domain.UnknownOutcome || got.LastError == nil || got.LastError.Code != "retention_expired" {
			t.Fatalf("%s one sweep after the retention ended: %s %+v; want unknown_outcome, retention_expired", typ, got.State, got.LastError)
		}
		events, err := ledger.Workflow.Timeline(ctx, wf, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		if ev := events[len(events)-1]; ev.Action != "resend_guard_lapsed" || ev.Actor.Kind != domain.ActorSystem {
			t.Fatalf("%s: last event %s by %s", typ, ev.Action, ev.Actor.Kind)
		}
		card := cards[typ]
		switch {
		case card.LookupAdapter == nil && got.DeskEnteredAt == nil:
			t.Fatalf("%s: not on the desk", typ)
		case card.LookupAdapter != nil && !domain.AwaitingLookup(got, card):
			t.Fatalf("%s: not awaiting its lookup (desk %v)", typ, got.DeskEnteredAt)
		}
	}
	claims, err := st.ClaimLookups(ctx, []string{looked.Name}, time.Now(), time.Minute, 10)
	if err != nil || len(claims) != 1 || claims[0].OperationID != ops[looked.Name].ID {
		t.Fatalf("the lookup of the lapsed guard: %+v %v; want it due at once", claims, err)
	}
}
