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
// what docs/concepts/leases.md says of the two-call lifecycle's cost: nobody knows
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
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: typ, Content: json.RawMessage(`{"to":"a","key":"` + key + `"}`),
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
	if n, err := l.Upkeep.Sweep(ctx, 100); err != nil || n != 3 {
		t.Fatalf("sweep ended %d leases (%v), want 3", n, err)
	}
	want := map[string]struct {
		state   domain.State
		code    string
		actions []string
		began   bool
	}{
		desk.ID: {domain.UnknownOutcome, "lease_expired", []string{domain.ActionRegisteredAndBegan, "lease_expired"}, true},
		resent.ID: {domain.FailedRetryable, domain.CodeResendGuarded,
			[]string{domain.ActionRegisteredAndBegan, "lease_expired", domain.CodeResendGuarded}, true},
		plain.ID: {domain.Received, "", []string{domain.ActionRegisteredAndClaimed, "lease_expired"}, false},
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

// TestRegisterClaim_oneEvent: a registration that claims is one change,
// written as one audit event that carries both facts — the registration's
// fingerprint and content hash, the claim's worker, attempt, lease expiry
// and provider key, and whether it began — at version 1; the chain goes on
// from it. The three-call form, each step a call of its own, still writes
// an event per step.
func TestRegisterClaim_oneEvent(t *testing.T) {
	ctx := context.Background()
	db := storetest.New(t)
	l := domain.NewLedger(db, testCards())
	type detail struct {
		Fingerprint    string    `json:"fingerprint"`
		ContentSHA256  string    `json:"content_sha256"`
		Worker         string    `json:"worker"`
		Attempt        int       `json:"attempt"`
		AttemptID      string    `json:"attempt_id"`
		LeaseExpiresAt time.Time `json:"lease_expires_at"`
		ProviderKey    string    `json:"provider_key"`
	}
	actions := func(id string) []domain.AuditEvent {
		t.Helper()
		evs, err := db.Timeline(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range evs {
			if e.Seq != int64(i+1) || e.Hash != domain.HashEvent(e) || (i > 0 && e.PrevHash != evs[i-1].Hash) {
				t.Fatalf("event %d breaks the chain: %+v", i, e)
			}
		}
		return evs
	}
	names := func(evs []domain.AuditEvent) []string {
		var out []string
		for _, e := range evs {
			out = append(out, e.Action)
		}
		return out
	}
	for _, begin := range []bool{false, true} {
		key := "evt_1:claimed"
		want, state := domain.ActionRegisteredAndClaimed, domain.Processing
		if begin {
			key, want, state = "evt_1:began", domain.ActionRegisteredAndBegan, domain.ActionPending
		}
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
			Content: json.RawMessage(`{"to":"a"}`), Claim: &domain.Claim{Worker: "w-9", Begin: begin}})
		if err != nil || res.Claim == nil {
			t.Fatalf("register %s: %+v %v", key, res, err)
		}
		op := res.Operation
		evs := actions(op.ID)
		if len(evs) != 1 || op.Version != 1 || op.State != state {
			t.Fatalf("%s: %v at version %d, %s; want one event, %s, at version 1", key, names(evs), op.Version, op.State, want)
		}
		e := evs[0]
		var d detail
		if err := json.Unmarshal(e.Detail, &d); err != nil {
			t.Fatal(err)
		}
		if e.Action != want || e.FromState != "" || e.ToState != state.String() || e.Hash != op.AuditHead ||
			d.Fingerprint != op.Fingerprint || d.ContentSHA256 != op.ContentSHA256 || d.Worker != "w-9" || d.Attempt != 1 ||
			d.AttemptID != res.Claim.Attempt.ID || !d.LeaseExpiresAt.Equal(res.Claim.Lease.ExpiresAt) || d.ProviderKey != op.ProviderKey {
			t.Fatalf("%s: event %+v, detail %s", key, e, e.Detail)
		}
		atts, err := db.Attempts(ctx, op.ID)
		if err != nil || len(atts) != 1 || atts[0].ID != d.AttemptID || (atts[0].BeganAt != nil) != begin {
			t.Fatalf("%s: attempts %+v (%v)", key, atts, err)
		}
		tok := res.Claim.Lease.Token
		if !begin {
			if _, err := l.Workflow.Begin(ctx, wf, op.ID, domain.Begin{LeaseToken: tok}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := l.Workflow.Settle(ctx, wf, op.ID, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeCompleted,
			Result: &domain.Result{Ref: "crm_1"}}); err != nil {
			t.Fatal(err)
		}
		got, wantAll := names(actions(op.ID)), []string{want, "began", "settled"}
		if begin {
			wantAll = []string{want, "settled"}
		}
		if !slices.Equal(got, wantAll) {
			t.Fatalf("%s: timeline %v, want %v", key, got, wantAll)
		}
	}

	// Three calls: register, claim, begin — an event each.
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_1:three", Type: "crm.task.create", Content: json.RawMessage(`{"to":"b"}`)})
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.Workflow.Claim(ctx, wf, res.Operation.ID, domain.Claim{Worker: "w-9"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := l.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: c.Lease.Token})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(actions(b.ID)); !slices.Equal(got, []string{"registered", "claimed", "began"}) || b.Version != 3 {
		t.Fatalf("three calls: timeline %v at version %d", got, b.Version)
	}
}

// TestSweep_followsTheLease: the sweep finds a lease by the time it ends
// now — the lease a claim after the registration gave, the lease a
// heartbeat extended — not the one the operation had before (the leases
// are open_operations' copies on both databases: migration 00029).
func TestSweep_followsTheLease(t *testing.T) {
	ctx := context.Background()
	db := storetest.New(t)
	clock := time.Now().UTC()
	if !storetest.Postgres() {
		db.SetClock(func() time.Time { return clock })
	}
	l := domain.NewLedger(db, testCards())
	l.Now = func() time.Time { return clock }
	queued, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_1:queued", Type: "crm.task.create",
		Content: json.RawMessage(`{"key":"queued"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Workflow.Claim(ctx, wf, queued.Operation.ID, domain.Claim{Worker: "w", Lease: time.Second}); err != nil {
		t.Fatal(err)
	}
	kept, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_1:kept", Type: "crm.task.create",
		Content: json.RawMessage(`{"key":"kept"}`), Claim: &domain.Claim{Worker: "w", Lease: time.Second}})
	if err != nil || kept.Claim == nil {
		t.Fatalf("register: %+v %v", kept, err)
	}
	if _, err := l.Workflow.Heartbeat(ctx, wf, kept.Operation.ID, domain.Heartbeat{LeaseToken: kept.Claim.Lease.Token, Lease: time.Hour}); err != nil {
		t.Fatal(err)
	}
	if storetest.Postgres() {
		time.Sleep(1100 * time.Millisecond) // PostgreSQL's clock cannot be moved
	} else {
		clock = clock.Add(2 * time.Second)
	}
	ops, _, err := db.Overdue(ctx, domain.OverdueQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, op := range ops {
		ids = append(ids, op.ID)
	}
	if len(ids) != 1 || ids[0] != queued.Operation.ID {
		t.Errorf("overdue %v, want only the claimed %s (the heartbeat's %s runs an hour)", ids, queued.Operation.ID, kept.Operation.ID)
	}
}
