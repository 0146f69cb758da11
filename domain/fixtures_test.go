package domain_test

import (
	"time"

	"github.com/opshandoff/handoff/domain"
	"pgregory.net/rapid"
)

// Shared fixtures of the domain tests: a fake clock, a card, actors and the
// audit checks every accepted change must pass.

// t0 is the fake clock's "now" unless a test moves it.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testCard is a valid card: no provider dedup, authoritative-capable lookup,
// five attempts within an hour.
func testCard() domain.Card {
	return domain.Card{
		Name:                "crm.task.create",
		Description:         "Create the follow-up task in the CRM",
		SideEffect:          "a task visible to the account owner",
		Provider:            "acme-crm",
		ProviderIdempotency: domain.IdempotencyNone,
		Lookup:              domain.LookupAPI,
		LookupURL:           "https://crm.example.com/tasks?external_id={provider_key}",
		Retry: domain.RetryPolicy{MaxAttempts: 5, MaxElapsed: time.Hour,
			Backoff: 2 * time.Second, BackoffMax: 5 * time.Minute},
		Retryable: []domain.ErrorClass{domain.ClassTransient, domain.ClassRateLimited},
		Terminal:  []domain.ErrorClass{domain.ClassValidation, domain.ClassAuth, domain.ClassPermission, domain.ClassConfig},
		Lease:     30 * time.Second,
		Owner:     "crm-oncall",
		NotifyURL: "https://hooks.example.com/handoff",
	}
}

// The actors. Roles are enforced by the Ledger (requirePerson), not by
// Decide; they are set here so the audit events carry them.
var (
	workflow = domain.Actor{Kind: domain.ActorWorkflow, Name: "n8n-prod", Namespace: "campaigns"}
	alice    = person("alice", domain.RoleOperator)
	bob      = person("bob", domain.RoleApprover)
	carol    = person("carol", domain.RoleApprover)
	dave     = person("dave", domain.RoleAdmin)
)

func person(name string, role domain.Role) domain.Actor {
	return domain.Actor{Kind: domain.ActorPerson, Name: name, Email: name + "@example.com",
		Subject: "sub-" + name, Issuer: "https://id.example.com", Role: role}
}

// newEnv is the environment of one decision at now.
func newEnv(card domain.Card, now time.Time, actor domain.Actor) domain.Env {
	return domain.Env{Card: card, Now: now, Actor: actor, NewID: (&domain.IDSource{}).New,
		Jitter: func() float64 { return 0.5 }, RequestID: "req-1", ClientAddr: "192.0.2.7"}
}

func ptr[T any](v T) *T { return &v }

// checkAudit asserts invariant 6 for one accepted change of an operation
// that was at fromVersion in fromState with audit head prevHead: at least one
// event, Seq contiguous and ending at the new version, each hash right and
// chained, the head moved to the last hash.
func checkAudit(t rapid.TB, prevHead string, fromVersion int64, fromState string, ch domain.Change) {
	t.Helper()
	if len(ch.Events) == 0 {
		t.Fatalf("accepted change without an audit event")
	}
	if ch.FromVersion != fromVersion {
		t.Fatalf("FromVersion = %d, want %d", ch.FromVersion, fromVersion)
	}
	prev := prevHead
	for i, ev := range ch.Events {
		if want := fromVersion + int64(i) + 1; ev.Seq != want {
			t.Fatalf("event %d (%s): Seq = %d, want %d", i, ev.Action, ev.Seq, want)
		}
		if ev.PrevHash != prev {
			t.Fatalf("event %d (%s): PrevHash = %q, want %q", i, ev.Action, ev.PrevHash, prev)
		}
		if ev.Hash != domain.HashEvent(ev) {
			t.Fatalf("event %d (%s): Hash does not match its content", i, ev.Action)
		}
		if ev.Stream != ch.Op.ID || ev.OperationID != ch.Op.ID || ev.Namespace != ch.Op.Namespace {
			t.Fatalf("event %d (%s): stream %q / op %q / ns %q, want %q / %q", i, ev.Action,
				ev.Stream, ev.OperationID, ev.Namespace, ch.Op.ID, ch.Op.Namespace)
		}
		if ev.ID == "" {
			t.Fatalf("event %d (%s) has no ID", i, ev.Action)
		}
		prev = ev.Hash
	}
	last := ch.Events[len(ch.Events)-1]
	if last.Seq != ch.Op.Version {
		t.Fatalf("last event Seq = %d, operation version = %d", last.Seq, ch.Op.Version)
	}
	if ch.Events[0].FromState != fromState {
		t.Fatalf("first event FromState = %q, want %q", ch.Events[0].FromState, fromState)
	}
	if last.ToState != ch.Op.State.String() {
		t.Fatalf("last event ToState = %q, operation state = %s", last.ToState, ch.Op.State)
	}
	if ch.Op.AuditHead != prev {
		t.Fatalf("AuditHead = %q, want the last event's hash %q", ch.Op.AuditHead, prev)
	}
}
