package reconcile_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store/storetest"
)

// dedupCards are two types of a provider that deduplicates by key: one that
// remembers a key for a day, one that forgets it before a lost worker's
// lease has even run out.
func dedupCards() domain.Cards {
	day := domain.Card{Name: "mail.send", Provider: "mailer", ProviderIdempotency: domain.IdempotencyKey,
		ProviderKeyRetention: 24 * time.Hour, Lookup: domain.LookupManual,
		Retry: domain.RetryPolicy{MaxAttempts: 5, Backoff: time.Second, BackoffMax: time.Second}, Lease: 30 * time.Second}
	brief := day
	brief.Name, brief.ProviderKeyRetention = "mail.brief", 500*time.Millisecond
	return domain.Cards{day.Name: day, brief.Name: brief}
}

// clock moves the store's time: a fake clock on SQLite, the real one on
// PostgreSQL, whose clock is read in SQL and cannot be moved.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) wait(d time.Duration) {
	if storetest.Postgres() {
		time.Sleep(d)
		return
	}
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestSweeperResendsWithinRetention: the sweeper ends a lease that expired
// after begin. When the provider still deduplicates the key, the system
// policy re-sends — failed_retryable under the same provider key, claimable
// again, and the timeline says the lease expired and why nobody was asked;
// when the key has left its retention, it is unknown_outcome on the desk.
func TestSweeperResendsWithinRetention(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	clk := &clock{now: time.Now().UTC().Truncate(time.Microsecond)}
	if !storetest.Postgres() {
		st.SetClock(clk.Now)
	}
	ledger := domain.NewLedger(st, dedupCards())
	ledger.Now = clk.Now
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	began := map[string]domain.Operation{}
	for _, typ := range []string{"mail.send", "mail.brief"} {
		res, err := ledger.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_1:" + typ, Type: typ,
			Content: json.RawMessage(`{"to":"a@example.com","type":"` + typ + `"}`), Claim: &domain.Claim{Worker: "w-1", Lease: time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		op, err := ledger.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: res.Claim.Lease.Token})
		if err != nil {
			t.Fatal(err)
		}
		began[typ] = op
	}
	clk.wait(1100 * time.Millisecond) // the worker is gone: both leases run out

	sweepCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		(&reconcile.Sweeper{Ledger: ledger.Upkeep, Interval: 10 * time.Millisecond}).Run(sweepCtx)
	}()
	after := map[string]domain.Operation{}
	deadline := time.Now().Add(10 * time.Second)
	for typ, op := range began {
		for {
			got, err := ledger.Workflow.Get(ctx, wf, op.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !got.State.Leased() {
				after[typ] = got
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s still %s: the sweeper did not act", typ, got.State)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	stop()
	<-done

	// Inside retention: re-sent by the system policy.
	op := after["mail.send"]
	if op.State != domain.FailedRetryable || op.LastError == nil || op.LastError.Code != domain.CodeResendGuarded ||
		op.ProviderKey != began["mail.send"].ProviderKey {
		t.Fatalf("mail.send after the sweep: %s error %+v key %q", op.State, op.LastError, op.ProviderKey)
	}
	events, err := ledger.Workflow.Timeline(ctx, wf, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := len(events)
	expired, resent := events[n-2], events[n-1]
	until := began["mail.send"].ProviderKeyFirstSentAt.Add(24 * time.Hour).UTC().Format(time.RFC3339Nano)
	if expired.Action != "lease_expired" || expired.FromState != "action_pending" || expired.ToState != "unknown_outcome" ||
		resent.Action != domain.CodeResendGuarded || resent.ToState != "failed_retryable" || resent.Actor.Kind != domain.ActorSystem ||
		!strings.Contains(string(resent.Detail), `"dedup_until":"`+until) {
		t.Fatalf("timeline ends %s %s→%s, %s %s→%s by %s %s", expired.Action, expired.FromState, expired.ToState,
			resent.Action, resent.FromState, resent.ToState, resent.Actor.Kind, resent.Detail)
	}
	clk.wait(1100 * time.Millisecond) // the backoff: at most a second
	claimed, err := ledger.Workflow.Claim(ctx, wf, op.ID, domain.Claim{Worker: "w-2"})
	if err != nil {
		t.Fatalf("claim of the re-sent operation: %v", err)
	}
	if claimed.Operation.ProviderKey != began["mail.send"].ProviderKey || claimed.Lease.Worker != "w-2" {
		t.Fatalf("claimed with provider key %q by %s", claimed.Operation.ProviderKey, claimed.Lease.Worker)
	}

	// Outside retention: a person decides, and the desk shows it.
	brief := after["mail.brief"]
	if brief.State != domain.UnknownOutcome || brief.LastError == nil || brief.LastError.Code != "lease_expired" {
		t.Fatalf("mail.brief after the sweep: %s error %+v", brief.State, brief.LastError)
	}
	viewer := domain.Actor{Kind: domain.ActorPerson, Name: "olga", Email: "olga@example.com", Role: domain.RoleViewer}
	desk, _, err := ledger.Desk.DeskQueue(ctx, viewer, domain.ListQuery{States: []domain.State{domain.UnknownOutcome}, Limit: 10}, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(desk) != 1 || desk[0].ID != brief.ID {
		t.Fatalf("the desk's unknown outcomes are %d items, want only mail.brief's", len(desk))
	}
}
