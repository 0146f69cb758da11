package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// assignPeople signs in the people of the assignment tests: Ada twice —
// at two identity providers with one email — Bob, and Vic, a viewer.
func assignPeople(t *testing.T, st *store.Store) (ada, adaElsewhere, bob, vic domain.Actor) {
	now := time.Now().UTC()
	p := func(iss, sub, email, name string, r domain.Role) domain.Actor {
		a := domain.Actor{Kind: domain.ActorPerson, Issuer: iss, Subject: sub, Email: email, Name: name, Role: r}
		signIn(t, st, a, now)
		return a
	}
	return p("https://idp", "u1", "ada@example.com", "Ada", domain.RoleOperator),
		p("https://other", "u9", "ada@example.com", "Ada Too", domain.RoleOperator),
		p("https://idp", "u2", "bob@example.com", "Bob", domain.RoleApprover),
		p("https://idp", "u3", "vic@example.com", "Vic", domain.RoleViewer)
}

// TestAssign_byPerson: an assignment names someone who signed in, by
// (issuer, subject); an unknown person, a viewer, or an email two people
// share is refused and changes nothing; "Mine" follows the person when
// their email changes, and is not someone else's with the same email.
func TestAssign_byPerson(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	ada, adaElsewhere, bob, vic := assignPeople(t, st)
	op := intoDesk(t, l, "evt_assign:a", true)

	if _, err := l.Desk.Assignee(ctx, bob, "ADA@example.com"); domain.ErrorCode(err) != domain.EInvalid {
		t.Fatalf("an email two people share: %v", err)
	}
	if p, err := l.Desk.Assignee(ctx, bob, "Bob@Example.com"); err != nil || p.Subject != "u2" || p.Issuer != "https://idp" {
		t.Fatalf("bob: %+v %v", p, err)
	}
	for name, to := range map[string]domain.Person{
		"unknown":    {Issuer: "https://idp", Subject: "u404", Email: "bob@example.com"},
		"viewer":     vic.Person(),
		"no subject": {Email: "ada@example.com"},
	} {
		_, err := l.Desk.Assign(ctx, bob, op.ID, domain.Assign{To: to, Reason: "r", ExpectedVersion: op.Version})
		if e := domain.AsError(err); e.Code != domain.EInvalid || len(e.Fields) != 1 || e.Fields[0].Field != "assignee" {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if got, _ := l.Workflow.Get(ctx, bob, op.ID); got.Version != op.Version || got.Assignee != "" {
		t.Fatalf("a refused assignment changed the operation: v%d %q", got.Version, got.Assignee)
	}

	// Bob assigns it to Ada: the Ledger records her as the people table
	// knows her, whatever else the command said of her.
	_, err := l.Desk.Assign(ctx, bob, op.ID, domain.Assign{To: domain.Person{Issuer: "https://idp", Subject: "u1", Email: "forged@example.com"},
		Reason: "Ada knows", ExpectedVersion: op.Version})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := l.Workflow.Get(ctx, bob, op.ID)
	if got.Assignee != "ada@example.com" || got.AssigneeIssuer != "https://idp" || got.AssigneeSubject != "u1" {
		t.Fatalf("stored %q %q %q", got.Assignee, got.AssigneeIssuer, got.AssigneeSubject)
	}
	events, _ := st.Timeline(ctx, op.ID)
	var d map[string]string
	_ = json.Unmarshal(events[len(events)-1].Detail, &d)
	if d["to"] != "ada@example.com" || d["to_issuer"] != "https://idp" || d["to_subject"] != "u1" {
		t.Fatalf("audit detail %s", events[len(events)-1].Detail)
	}

	mine := func(a domain.Actor) int {
		t.Helper()
		ops, _, err := l.Workflow.List(ctx, a, domain.ListQuery{HeldBy: &a, States: domain.DeskStates}, "")
		if err != nil {
			t.Fatal(err)
		}
		return len(ops)
	}
	renamed := ada
	renamed.Email = "ada.lovelace@example.com"
	if mine(ada) != 1 || mine(renamed) != 1 || mine(adaElsewhere) != 0 || mine(bob) != 0 {
		t.Fatalf("mine: ada %d, renamed %d, elsewhere %d, bob %d", mine(ada), mine(renamed), mine(adaElsewhere), mine(bob))
	}
}

// TestAssign_survivesWorkerWrites: an assignment made while a worker holds
// the lease stays through the worker's begin and settle — on PostgreSQL
// the fast path's single-statement writes, which read and write the
// assignee's issuer and subject with the rest of the row.
func TestAssign_survivesWorkerWrites(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	_, _, bob, _ := assignPeople(t, st)
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_fast:a", Type: "crm.task.create",
		Content: json.RawMessage(`{"a":1}`), Claim: &domain.Claim{Worker: "w"}})
	if err != nil || res.Claim == nil {
		t.Fatalf("register: %+v %v", res, err)
	}
	id, tok := res.Operation.ID, res.Claim.Lease.Token
	if _, err := l.Desk.Assign(ctx, bob, id, domain.Assign{To: bob.Person(), Reason: "watching it"}); err != nil {
		t.Fatal(err)
	}
	kept := func(step string) {
		t.Helper()
		got, err := l.Workflow.Get(ctx, bob, id)
		if err != nil || got.Assignee != "bob@example.com" || got.AssigneeIssuer != "https://idp" || got.AssigneeSubject != "u2" {
			t.Fatalf("after %s: assignee %q %q %q %v", step, got.Assignee, got.AssigneeIssuer, got.AssigneeSubject, err)
		}
	}
	kept("assign")
	if _, err := l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: tok}); err != nil {
		t.Fatal(err)
	}
	kept("begin")
	if _, err := l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Code: "read_timeout"}}); err != nil {
		t.Fatal(err)
	}
	kept("settle")
	if ops, _, err := l.Workflow.List(ctx, bob, domain.ListQuery{HeldBy: &bob, States: domain.DeskStates}, ""); err != nil || len(ops) != 1 {
		t.Fatalf("bob's desk: %d %v", len(ops), err)
	}
}
