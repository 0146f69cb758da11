package domain_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestOutboxIsWrittenWithTheTransition: the desk entry's notification is in
// the outbox once the transition is, and a change that loses its
// compare-and-set writes no notification.
func TestOutboxIsWrittenWithTheTransition(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, notifyCards())
	op := toDesk(t, l, "k1")
	ns, err := st.Notifications(ctx, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	if all := len(ns); all != 2 {
		t.Fatalf("outbox: %d notifications, want the item's and its incident's opening", all)
	}
	ns = itemNotices(ns)
	if len(ns) != 1 || ns[0].Type != domain.NotifyHandedOff || ns[0].Status != domain.NotificationPending ||
		ns[0].Destination.URL != "https://hooks.example.com/crm.task.create" || ns[0].Destination.SecretEnv != "S" {
		t.Fatalf("outbox: %+v", ns)
	}
	if op.DeskEnteredAt == nil {
		t.Fatal("desk entry time not kept")
	}

	// A stale change (version moved) writes nothing, notifications included.
	loaded, now, err := st.Load(ctx, "", op.ID)
	if err != nil {
		t.Fatal(err)
	}
	card := notifyCards()["crm.task.create"]
	env := domain.Env{Card: card, Now: now, Actor: deskAdmin, NewID: (&domain.IDSource{}).New, Jitter: func() float64 { return 0 }}
	ch, err := domain.Decide(loaded, domain.Resolve{Action: domain.ResolveConfirmExecuted, Result: &domain.Result{Ref: "r"}, Reason: "seen"}, env)
	if err != nil || len(ch.Notifications) != 1 {
		t.Fatalf("decide: %v %+v", err, ch.Notifications)
	}
	ch.FromVersion--
	if err := st.Apply(ctx, ch); domain.ErrorCode(err) != domain.EConflict {
		t.Fatalf("stale apply: %v", err)
	}
	if ns, _ := st.Notifications(ctx, op.ID); len(itemNotices(ns)) != 1 {
		t.Fatalf("a refused change left %d notifications", len(ns))
	}
	if list, _ := l.Incidents.DeskIncidents(ctx, deskAdmin); len(list) != 1 || list[0].OpenItems != 1 {
		t.Fatalf("a refused change moved the incident: %+v", list)
	}
	ch.FromVersion++
	if err := st.Apply(ctx, ch); err != nil {
		t.Fatal(err)
	}
	ns, _ = st.Notifications(ctx, op.ID)
	ns = itemNotices(ns)
	if len(ns) != 2 || ns[1].Type != domain.NotifyResolved {
		t.Fatalf("after resolve: %+v", ns)
	}
}

// TestEscalationSweep moves the clock past escalate_after: the sweep
// escalates the unassigned desk item once, and never the assigned one.
func TestEscalationSweep(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, notifyCards())
	lone := toDesk(t, l, "lone")
	taken := toDesk(t, l, "taken")
	if _, err := l.Desk.Assign(ctx, deskAdmin, taken.ID, domain.Assign{To: deskAdmin.Person(), Reason: "mine"}); err != nil {
		t.Fatal(err)
	}
	clock := time.Now().UTC().Add(29 * time.Minute)
	st.SetClock(func() time.Time { return clock })
	escalated := func() map[string]int {
		out := map[string]int{}
		for _, id := range []string{lone.ID, taken.ID} {
			ns, err := st.Notifications(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range ns {
				if n.Type == domain.NotifyEscalated {
					out[id]++
				}
			}
		}
		return out
	}
	if _, err := l.Upkeep.Sweep(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if e := escalated(); len(e) != 0 {
		t.Fatalf("escalated before escalate_after: %v", e)
	}
	clock = clock.Add(2 * time.Minute)
	for range 3 {
		if _, err := l.Upkeep.Sweep(ctx, 100); err != nil {
			t.Fatal(err)
		}
	}
	if e := escalated(); e[lone.ID] != 1 || e[taken.ID] != 0 {
		t.Fatalf("escalations %v, want one for %s only", e, lone.ID)
	}
	op, _ := l.Workflow.Get(ctx, deskAdmin, lone.ID)
	if op.EscalatedAt == nil {
		t.Fatal("escalation not recorded on the operation")
	}
}

func notifyCards() domain.Cards {
	cs := testCards()
	for name, c := range cs {
		c.Notify = []domain.Destination{{URL: "https://hooks.example.com/" + name, SecretEnv: "S", Format: domain.FormatStandard}}
		c.EscalateAfter = 30 * time.Minute
		c.Escalate = []domain.Destination{{URL: "https://pager.example.com/", Format: domain.FormatStandard}}
		cs[name] = c
	}
	return cs
}

var deskAdmin = domain.Actor{Kind: domain.ActorPerson, Name: "dave", Email: "dave@example.com", Role: domain.RoleAdmin}

// itemNotices leaves out the notices of the item's incident
// (incident_entry.go): the tests of an item's own notifications count
// those.
func itemNotices(ns []domain.NotificationRecord) []domain.NotificationRecord {
	var out []domain.NotificationRecord
	for _, n := range ns {
		if n.Summary.Incident == nil {
			out = append(out, n)
		}
	}
	return out
}

// toDesk registers an operation and settles it as unknown_outcome.
func toDesk(t *testing.T, l *domain.Ledger, key string) domain.Operation {
	t.Helper()
	ctx := context.Background()
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create", Content: json.RawMessage(`{"a":"` + key + `"}`),
		Claim: &domain.Claim{Worker: "w"}})
	if err != nil || res.Claim == nil {
		t.Fatalf("register: %+v %v", res, err)
	}
	tok := res.Claim.Lease.Token
	if _, err := l.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: tok}); err != nil {
		t.Fatal(err)
	}
	op, err := l.Workflow.Settle(ctx, wf, res.Operation.ID, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Code: "read_timeout"}})
	if err != nil || op.State != domain.UnknownOutcome {
		t.Fatalf("settle: %s %v", op.State, err)
	}
	return op
}
