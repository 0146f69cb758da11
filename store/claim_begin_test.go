package store_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestClaimBegin_WorkerDiesBeforeItsCall: a worker that got a claim with
// begin and died before calling the provider — its lease runs out — leaves
// what the README says of the two-call lifecycle's cost: nobody knows
// whether the provider was called. Where the card's provider deduplicates
// by key and the key is inside its retention the system re-sends it under
// the same key (failed_retryable, resend_guarded); otherwise it waits on
// the desk (unknown_outcome). A claim without begin that dies the same way
// was never sent and goes back to received. Each one's attempt and audit
// trail say so; processing is never written for the begun claims.
func TestClaimBegin_WorkerDiesBeforeItsCall(t *testing.T) {
	ctx := context.Background()
	db := storetest.New(t)
	clock := time.Now().UTC()
	if !storetest.Postgres() {
		db.SetClock(func() time.Time { return clock })
	}
	l := domain.NewLedger(db, testCards())
	l.Now = func() time.Time { return clock }
	register := func(key, typ string, begin bool) domain.Operation {
		t.Helper()
		res, err := l.Register(ctx, wf, domain.Registration{Key: key, Type: typ, Content: json.RawMessage(`{"to":"a","key":"` + key + `"}`),
			Claim: &domain.Claim{Worker: "w", Lease: time.Second, Begin: begin}})
		if err != nil || res.Claim == nil {
			t.Fatalf("register %s: %+v %v", key, res, err)
		}
		return res.Operation
	}
	desk := register("evt_1:desk", "crm.task.create", true)
	resent := register("evt_1:resent", "mail.send", true)
	plain := register("evt_1:plain", "crm.task.create", false)
	for _, op := range []domain.Operation{desk, resent} {
		if op.State != domain.ActionPending || op.ProviderKeyFirstSentAt == nil {
			t.Fatalf("%s answered as %s, first sent %v", op.Key, op.State, op.ProviderKeyFirstSentAt)
		}
	}
	// The worker is gone: nobody heartbeats, the lease runs out.
	if storetest.Postgres() {
		time.Sleep(1100 * time.Millisecond) // PostgreSQL's clock cannot be moved
	} else {
		clock = clock.Add(2 * time.Second)
	}
	if n, err := l.Sweep(ctx, 100); err != nil || n != 3 {
		t.Fatalf("sweep ended %d leases (%v), want 3", n, err)
	}
	want := map[string]struct {
		state   domain.State
		code    string
		actions []string
		began   bool
	}{
		desk.ID: {domain.UnknownOutcome, "lease_expired", []string{"registered", domain.ActionClaimedAndBegan, "lease_expired"}, true},
		resent.ID: {domain.FailedRetryable, domain.CodeResendGuarded,
			[]string{"registered", domain.ActionClaimedAndBegan, "lease_expired", domain.CodeResendGuarded}, true},
		plain.ID: {domain.Received, "", []string{"registered", "claimed", "lease_expired"}, false},
	}
	for id, w := range want {
		op, _, err := db.Load(ctx, "", id)
		if err != nil {
			t.Fatal(err)
		}
		code := ""
		if op.LastError != nil {
			code = op.LastError.Code
		}
		if op.State != w.state || code != w.code || op.Lease != nil {
			t.Fatalf("%s: %s (%q), lease %+v; want %s (%q), no lease", op.Key, op.State, code, op.Lease, w.state, w.code)
		}
		events, err := db.Timeline(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var actions []string
		for _, e := range events {
			actions = append(actions, e.Action)
			if e.ToState == domain.Processing.String() && w.began {
				t.Fatalf("%s: a begun claim wrote processing: %+v", op.Key, e)
			}
		}
		if !slices.Equal(actions, w.actions) {
			t.Fatalf("%s: timeline %v, want %v", op.Key, actions, w.actions)
		}
		atts, err := db.Attempts(ctx, id)
		if err != nil || len(atts) != 1 || (atts[0].BeganAt != nil) != w.began || atts[0].Outcome != "lease_expired" {
			t.Fatalf("%s: attempts %+v (%v)", op.Key, atts, err)
		}
	}
}
