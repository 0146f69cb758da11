package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// replicas opens n stores on one database, as n server processes would.
func replicas(t *testing.T, n int) []*store.Store {
	t.Helper()
	url := storetest.URL(t)
	var out []*store.Store
	for range n {
		s, err := store.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		out = append(out, s)
	}
	return out
}

// trailOf is the store's audit trail, its checkpoints written again when
// they give up waiting for another test's transaction (storetest.Checkpoints).
func trailOf(s *store.Store) *audit.Trail { return audit.NewTrail(storetest.Checkpoints(s)) }

// lifecycleEvents is how many events complete writes for an operation:
// registered_and_claimed (the registration's claim is part of its
// event), began, settled.
const lifecycleEvents = 3

// complete drives one operation to completed: lifecycleEvents audit events.
func complete(t *testing.T, l *domain.Ledger, key string) {
	ctx := context.Background()
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
		Content: json.RawMessage(`{"n":"` + key + `"}`), Claim: &domain.Claim{Worker: "w"}})
	if err != nil {
		t.Error(err)
		return
	}
	tok := res.Claim.Lease.Token
	if _, err := l.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: tok}); err != nil {
		t.Error(err)
		return
	}
	if _, err := l.Workflow.Settle(ctx, wf, res.Operation.ID, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeCompleted,
		Result: &domain.Result{Ref: "r"}}); err != nil {
		t.Error(err)
	}
}

// TestCheckpointersOnSeveralReplicas runs three checkpointers on one
// database while operations are written: checkpoints are numbered without
// gaps or repeats, one final tick covers every stream, and the trail
// verifies.
func TestCheckpointersOnSeveralReplicas(t *testing.T) {
	ctx := context.Background()
	rs := replicas(t, 3)
	quiet := slog.New(slog.DiscardHandler)
	loopCtx, stop := context.WithCancel(ctx)
	var loops sync.WaitGroup
	for _, s := range rs {
		loops.Add(1)
		go func() {
			defer loops.Done()
			(&reconcile.Checkpointer{Trail: trailOf(s), Interval: 5 * time.Millisecond, Log: quiet}).Run(loopCtx)
		}()
	}
	var writers sync.WaitGroup
	for i := range 30 {
		writers.Add(1)
		go func() {
			defer writers.Done()
			complete(t, domain.NewLedger(rs[i%3], card()), fmt.Sprintf("k%d", i))
		}()
	}
	writers.Wait()
	stop()
	loops.Wait()

	// A loop stopped mid-transaction leaves its lock to the server until the
	// session's rollback lands, and a checkpointer that finds the lock taken
	// skips its turn: tick until every stream is covered.
	var covered map[string]int64
	for deadline := time.Now().Add(10 * time.Second); ; {
		(&reconcile.Checkpointer{Trail: trailOf(rs[0]), Log: quiet}).Tick(ctx)
		covered = coverage(t, rs[0])
		done := len(covered) == 30
		for _, seq := range covered {
			done = done && seq == lifecycleEvents
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(covered) != 30 {
		t.Fatalf("%d streams covered, want 30", len(covered))
	}
	for stream, seq := range covered {
		if seq != lifecycleEvents {
			t.Fatalf("stream %s covered up to seq %d, want its last event, %d", stream, seq, lifecycleEvents)
		}
	}
	rep, err := trailOf(rs[1]).VerifyDB(ctx, &audit.Verifier{})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", err, rep.Breaks)
	}
}

// coverage checks that checkpoints are numbered 1, 2, … and returns the
// highest seq they recorded for each stream.
func coverage(t *testing.T, s *store.Store) map[string]int64 {
	t.Helper()
	cps, _, err := s.ListAudit(context.Background(), domain.AuditSelect{AuditQuery: domain.AuditQuery{Action: domain.ActionCheckpoint, Limit: 200}})
	if err != nil {
		t.Fatal(err)
	}
	covered := map[string]int64{}
	for i, e := range cps {
		c, err := audit.ParseCheckpoint(e)
		if err != nil || c.Seq != int64(i+1) {
			t.Fatalf("checkpoint %d is numbered %d (%v)", i+1, c.Seq, err)
		}
		for _, h := range c.Heads {
			covered[h.Stream] = max(covered[h.Stream], h.Seq)
		}
	}
	return covered
}

// TestCheckpointer_retention purges the streams of final operations past
// the retention, leaves tombstones that a checkpoint covers, and keeps a
// trail that verifies.
func TestCheckpointer_retention(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, card())
	for i := range 3 {
		complete(t, l, fmt.Sprintf("k%d", i))
	}
	trail := trailOf(s)
	trail.Now = func() time.Time { return time.Now().Add(time.Hour) }
	(&reconcile.Checkpointer{Trail: trail, Retention: time.Minute, Log: slog.New(slog.DiscardHandler)}).Tick(ctx)
	tombs, _, err := s.ListAudit(ctx, domain.AuditSelect{AuditQuery: domain.AuditQuery{Action: domain.ActionStreamPurged}})
	if err != nil || len(tombs) != 3 {
		t.Fatalf("%d tombstones (%v), want 3", len(tombs), err)
	}
	left, _, _ := s.ListAudit(ctx, domain.AuditSelect{Namespace: "ns"})
	if len(left) != 0 {
		t.Fatalf("%d operation events left after the purge", len(left))
	}
	rep, err := trail.VerifyDB(ctx, &audit.Verifier{})
	if err != nil || !rep.OK() || rep.Checkpoints != 1 {
		t.Fatalf("verify after retention: %+v %v", rep, err)
	}
}
