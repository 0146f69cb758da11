package store

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// planCase is one transition's change and what its plan must say.
type planCase struct {
	name    string
	ch      domain.Change
	create  bool
	route   route
	attempt string // "", "insert", or "set " and the columns set
	content string // "", "insert", or "set " and the columns set
	// incident: the change puts its item on the desk, and its incident
	// follows in the transaction; nothing else carries an incident part.
	incident bool
	outbox   int
}

// TestPlan_everyTransition: the plan of every kind of change — its route,
// its guard, the operation columns it writes, its attempt and content
// rows and its outbox — decided without a database.
func TestPlan_everyTransition(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	ids := &domain.IDSource{}
	card := domain.Card{Name: "crm.task.create", Provider: "acme", ProviderIdempotency: domain.IdempotencyNone,
		Lookup: domain.LookupManual, Retry: domain.RetryPolicy{MaxAttempts: 3, MaxElapsed: time.Hour, Backoff: time.Second, BackoffMax: time.Minute},
		Retryable: []domain.ErrorClass{domain.ClassTransient}, Terminal: []domain.ErrorClass{domain.ClassValidation},
		Lease: 30 * time.Second, Notify: []domain.Destination{{URL: "https://hooks.example.com/desk"}}}
	approval := card
	approval.Name, approval.RequiresApproval, approval.Notify = "coupon.issue", true, nil
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	person := domain.Actor{Kind: domain.ActorPerson, Name: "olga", Email: "olga@example.com", Role: domain.RoleApprover}
	env := func(c domain.Card, a domain.Actor) domain.Env {
		now = now.Add(time.Second)
		return domain.Env{Card: c, Now: now, Actor: a, NewID: ids.New, Jitter: func() float64 { return 0 }}
	}
	register := func(c domain.Card, key string, claim *domain.Claim) domain.Change {
		ch, err := domain.NewOperation(domain.Registration{Namespace: "ns", Key: key, Type: c.Name, Claim: claim},
			[]byte(`{"a":1}`), false, env(c, wf))
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	decide := func(op domain.Operation, c domain.Card, a domain.Actor, cmd domain.Command) domain.Change {
		t.Helper()
		ch, err := domain.Decide(op, cmd, env(c, a))
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	settled := "set settled_at, outcome, error_class, error_code, error_message, settle_sha256"

	plain := register(card, "plain", nil)
	claimed := register(card, "claimed", &domain.Claim{Worker: "w1"})
	begun := register(card, "begun", &domain.Claim{Worker: "w1", Begin: true})
	claim := decide(plain.Op, card, wf, domain.Claim{Worker: "w1"})
	claimBegin := decide(plain.Op, card, wf, domain.Claim{Worker: "w1", Begin: true})
	begin := decide(claimed.Op, card, wf, domain.Begin{LeaseToken: claimed.Op.LeaseToken})
	beat := decide(begin.Op, card, wf, domain.Heartbeat{LeaseToken: claimed.Op.LeaseToken, Lease: time.Minute})
	live := beat
	live.LiveLease = true
	done := decide(begin.Op, card, wf, domain.Settle{LeaseToken: claimed.Op.LeaseToken, Outcome: domain.OutcomeCompleted,
		Result: &domain.Result{Ref: "r1", Data: json.RawMessage(`{"id":1}`)}})
	doubt := decide(begun.Op, card, wf, domain.Settle{LeaseToken: begun.Op.LeaseToken, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "no answer"}})
	quiet := card
	quiet.Notify = nil
	quietBegun := register(quiet, "quiet", &domain.Claim{Worker: "w1", Begin: true})
	quietDoubt := decide(quietBegun.Op, quiet, wf, domain.Settle{LeaseToken: quietBegun.Op.LeaseToken, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "no answer"}})
	note := decide(done.Op, card, person, domain.Note{Text: "seen"})
	held := register(approval, "held", nil)
	revise := decide(held.Op, approval, person, domain.Revise{Content: json.RawMessage(`{"a":2}`), Reason: "typo"})
	approve := decide(revise.Op, approval, domain.Actor{Kind: domain.ActorPerson, Name: "ari", Email: "ari@example.com",
		Role: domain.RoleApprover}, domain.Approve{ContentVersion: 2})
	reject := decide(held.Op, approval, person, domain.Reject{ContentVersion: 1, Reason: "no"})
	again := register(approval, "again", nil)
	link := reject
	link.Op.SupersededBy, link.FromVersion, link.Before = again.Op.ID, reject.Op.Version, &reject.Op
	link.Op.Version++
	again.Superseded = &link

	for _, c := range []planCase{
		{name: "register", ch: plain, create: true, route: routeMulti, content: "insert"},
		{name: "register with a claim", ch: claimed, create: true, route: routeMulti, attempt: "insert", content: "insert"},
		{name: "register with a begun claim", ch: begun, create: true, route: routeMulti, attempt: "insert", content: "insert"},
		{name: "claim", ch: claim, route: routeMulti, attempt: "insert"},
		{name: "claim that begins", ch: claimBegin, route: routeMulti, attempt: "insert"},
		{name: "begin", ch: begin, route: routeMulti, attempt: "set began_at"},
		{name: "heartbeat", ch: beat, route: routeMulti},
		{name: "heartbeat on the lease cache", ch: live, route: routeMulti},
		{name: "settle completed", ch: done, route: routeMulti, attempt: settled},
		{name: "settle doubtful, notifying", ch: doubt, route: routeTx, attempt: settled, outbox: 1, incident: true},
		{name: "settle doubtful, nobody to notify", ch: quietDoubt, route: routeTx, attempt: settled, incident: true},
		{name: "note", ch: note, route: routeMulti},
		{name: "revise", ch: revise, route: routeSingle, content: "insert"},
		{name: "approve", ch: approve, route: routeTx, content: "set approved_by, approved_at"},
		{name: "reject", ch: reject, route: routeTx, content: "set rejected_by, rejected_at"},
		{name: "register superseding", ch: again, create: true, route: routeTx, content: "insert"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var p *writePlan
			if c.create {
				p = planCreate(c.ch)
			} else {
				p = planChange(c.ch)
			}
			if p.create != c.create || p.route != c.route {
				t.Errorf("create %v route %d, want %v %d", p.create, p.route, c.create, c.route)
			}
			if (p.incidentEntry != nil) != c.incident || p.incidentExit != nil {
				t.Errorf("incident entry %v exit %v, want entry %v", p.incidentEntry != nil, p.incidentExit != nil, c.incident)
			}
			if got := childSummary(p.attempt); got != c.attempt {
				t.Errorf("attempt %q, want %q", got, c.attempt)
			}
			if got := childSummary(p.content); got != c.content {
				t.Errorf("content %q, want %q", got, c.content)
			}
			if len(p.outbox) != c.outbox || len(p.events) != len(c.ch.Events) || len(p.events) == 0 {
				t.Errorf("%d outbox rows and %d events, want %d and %d", len(p.outbox), len(p.events), c.outbox, len(c.ch.Events))
			}
			if c.create {
				checkCreate(t, p)
			} else {
				checkUpdate(t, c.ch, p)
			}
			if (p.superseded != nil) != (c.ch.Superseded != nil) {
				t.Errorf("superseded plan %v, want %v", p.superseded != nil, c.ch.Superseded != nil)
			}
		})
	}
}

func childSummary(w *childWrite) string {
	switch {
	case w == nil:
		return ""
	case w.insert != nil:
		return "insert"
	}
	names := make([]string, len(w.set))
	for i, c := range w.set {
		names[i] = c.name
	}
	return "set " + strings.Join(names, ", ")
}

// checkCreate: an insert writes every column but the read-only ones.
func checkCreate(t *testing.T, p *writePlan) {
	t.Helper()
	var want []string
	for _, c := range opTable {
		if c.class != readOnly {
			want = append(want, c.name)
		}
	}
	if got := colNames(p.cols); !slices.Equal(got, want) {
		t.Errorf("an insert writes %v, want %v", got, want)
	}
}

// checkUpdate: the guard is the version decided on, the content version
// unless a snapshot comes with the change, and the lease when decided on
// the cache; the columns written are exactly the state columns that
// changed, and the content columns with a snapshot only.
func checkUpdate(t *testing.T, ch domain.Change, p *writePlan) {
	t.Helper()
	g := p.guard
	if g.id != ch.Op.ID || g.version != ch.FromVersion || g.checkContent != (ch.Content == nil) ||
		g.contentVersion != ch.Op.ContentVersion || g.liveLease != ch.LiveLease {
		t.Errorf("guard %+v for a change from version %d, live %v, snapshot %v", g, ch.FromVersion, ch.LiveLease, ch.Content != nil)
	}
	after, before := toOperationRow(ch.Op), toOperationRow(*ch.Before)
	var want []string
	for _, c := range opTable {
		changed := !sameValue(valueOf(c.field(&after)), valueOf(c.field(&before)))
		if (c.class == state && changed) || (c.class == content && ch.Content != nil) {
			want = append(want, c.name)
		}
	}
	slices.Sort(want)
	if got := slices.Sorted(slices.Values(colNames(p.cols))); !slices.Equal(got, want) {
		t.Errorf("an update writes %v, want %v", got, want)
	}
	if !slices.Contains(colNames(p.cols), "version") {
		t.Error("an update does not write the version")
	}
}

func colNames(cols []col) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
	}
	return out
}
