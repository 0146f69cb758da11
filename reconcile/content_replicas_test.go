package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// TestContentRetention_threeReplicasTwoActionEvents: 400 events of two
// actions each complete; three replicas — three stores on one database, each
// with its purge loop — then purge at once, in batches so small that the
// two operations of an event are often taken by two replicas together. No event and no
// operation may keep the content: a replica rewriting an event's actions
// must not overwrite another's rewrite of the same event. It counts on
// PostgreSQL (HANDOFF_TEST_POSTGRES); SQLite serialises writers anyway.
func TestContentRetention_threeReplicasTwoActionEvents(t *testing.T) {
	ctx := context.Background()
	stores := replicas(t, 3)
	st := stores[0]
	ledger := domain.NewLedger(st, card())
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	const events = 400
	secret := func(ev int, action string) string { return fmt.Sprintf("secret-%d-%s@example.com", ev, action) }

	var ids []string
	for i := range events {
		var actions []domain.EventAction
		for _, a := range []string{"a", "b"} {
			actions = append(actions, domain.EventAction{Action: a, Type: "crm.task.create",
				Content: json.RawMessage(fmt.Sprintf(`{"email":%q}`, secret(i, a)))})
		}
		res, err := ledger.Workflow.RegisterEvent(ctx, wf, domain.EventRegistration{EventID: fmt.Sprintf("evt_%d", i), Actions: actions})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range res.Operations {
			ids = append(ids, op.ID)
		}
	}
	// Both operations of an event complete one after the other, so they sit
	// side by side in the purge order and two replicas take them at once.
	work := make(chan []string)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for pair := range work {
				for _, id := range pair {
					completeRegistered(t, ledger, wf, id)
				}
			}
		})
	}
	for i := 0; i < len(ids); i += 2 {
		work <- ids[i : i+2]
	}
	close(work)
	wg.Wait()

	// Three replicas' purge loops, an hour later, in small batches (one,
	// two and three operations) so that batch edges fall between the two
	// operations of many events.
	for r, s := range stores {
		replica := domain.NewLedger(s, card())
		replica.Now = func() time.Time { return time.Now().Add(61 * time.Minute) }
		wg.Go(func() {
			for range 4 * len(ids) {
				n, err := replica.Upkeep.PurgeContent(ctx, time.Hour, r+1)
				if err == nil && n == 0 {
					return
				}
			}
			t.Errorf("replica %d never ran out of content to purge", r)
		})
	}
	wg.Wait()

	leakedEvents, leakedOps := 0, 0
	for i := range events {
		ev, err := st.GetEvent(ctx, "ns", fmt.Sprintf("evt_%d", i))
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(ev.Actions)
		if strings.Contains(string(raw), "@example.com") {
			leakedEvents++
		}
	}
	for _, id := range ids {
		op, _, err := st.Load(ctx, "ns", id)
		if err != nil {
			t.Fatal(err)
		}
		if len(op.Content) > 0 || op.ContentPurgedAt == nil {
			leakedOps++
		}
	}
	if leakedEvents > 0 || leakedOps > 0 {
		t.Fatalf("after three replicas purged: %d of %d events and %d of %d operations still hold content",
			leakedEvents, events, leakedOps, len(ids))
	}
}

// completeRegistered takes a registered operation through claim, begin and a
// completed settle.
func completeRegistered(t *testing.T, l *domain.Ledger, wf domain.Actor, id string) {
	ctx := context.Background()
	cl, err := l.Workflow.Claim(ctx, wf, id, domain.Claim{Worker: "w"})
	if err == nil {
		_, err = l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: cl.Lease.Token})
	}
	if err == nil {
		_, err = l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: cl.Lease.Token, Outcome: domain.OutcomeCompleted,
			Result: &domain.Result{Ref: "task_" + id}})
	}
	if err != nil {
		t.Error(err)
	}
}
