package domain_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

func adapterCard() domain.Card {
	c := testCard()
	c.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: "https://crm.example.com/api/tasks?external_id={provider_key}",
		Found: domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", WhenNonempty: "/data"}, NotFoundStatus: []int{404},
		Window: 2 * time.Minute}
	return c
}

// unknownAfterBegin is an operation in action_pending settled as a timeout
// on card: the change that puts it in unknown_outcome.
func unknownAfterBegin(t *testing.T, card domain.Card) (domain.Operation, domain.Change) {
	t.Helper()
	op := domain.Operation{ID: "op_1", Namespace: "campaigns", Key: "evt_1:crm", Type: card.Name, State: domain.ActionPending,
		Version: 3, Attempts: 1, ProviderKey: "hk_1", LeaseToken: 7,
		Lease: &domain.Lease{Token: 7, Worker: "w", ExpiresAt: t0.Add(time.Minute)}, ProviderKeyFirstSentAt: &t0,
		DeskEnteredAt: ptr(t0.Add(-time.Hour))} // a desk stay before this attempt
	ch, err := domain.Decide(op, domain.Settle{LeaseToken: 7, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Code: "timeout"}}, newEnv(card, t0, workflow))
	if err != nil {
		t.Fatal(err)
	}
	return ch.Op, ch
}

// TestLookupDefersTheHandOff: on a card with an adapter, entering
// unknown_outcome starts no desk clock and writes no notification; without
// an adapter the same settle hands the operation off at once.
func TestLookupDefersTheHandOff(t *testing.T) {
	op, ch := unknownAfterBegin(t, adapterCard())
	if op.State != domain.UnknownOutcome || op.DeskEnteredAt != nil || ch.DeskEntry != "" || len(ch.Notifications) != 0 ||
		!domain.AwaitingLookup(op, adapterCard()) {
		t.Fatalf("with an adapter: %s desk %v entry %q %d notifications", op.State, op.DeskEnteredAt, ch.DeskEntry, len(ch.Notifications))
	}
	plain, ch2 := unknownAfterBegin(t, testCard())
	if plain.DeskEnteredAt == nil || ch2.DeskEntry == "" || len(ch2.Notifications) != 1 || ch2.Notifications[0].Type != domain.NotifyHandedOff {
		t.Fatalf("without an adapter the hand-off is at once: desk %v entry %q %d notifications", plain.DeskEnteredAt, ch2.DeskEntry, len(ch2.Notifications))
	}
}

func TestConcludeLookup(t *testing.T) {
	card := adapterCard()
	op, _ := unknownAfterBegin(t, card)
	try := func(r domain.LookupResult, ref string) domain.LookupTry {
		return domain.LookupTry{At: t0, Method: "GET", URL: "https://crm.example.com/api/tasks?external_id=hk_1", Status: 200, Result: r, Ref: ref}
	}
	sys := newEnv(card, t0.Add(time.Second), domain.System)

	found, err := domain.Decide(op, domain.ConcludeLookup{Attempt: 1, Conclusion: domain.ConcludedFound,
		Tries: []domain.LookupTry{try(domain.LookupNotFound, ""), try(domain.LookupFoundDone, "task_9")}}, sys)
	if err != nil || found.Op.State != domain.Completed || found.Op.Result.Ref != "task_9" || found.LeftDesk != nil ||
		len(found.Notifications) != 0 || !strings.Contains(string(found.Events[0].Detail), "looked up 2×") {
		t.Fatalf("found: %v %s %+v left desk %+v, %d notifications", err, found.Op.State, found.Op.Result, found.LeftDesk, len(found.Notifications))
	}

	desk, err := domain.Decide(op, domain.ConcludeLookup{Attempt: 1, Conclusion: domain.ConcludedDesk,
		Tries: []domain.LookupTry{try(domain.LookupConflict, "task_9")}}, sys)
	if err != nil || desk.Op.State != domain.UnknownOutcome || desk.Op.DeskEnteredAt == nil || desk.DeskEntry != "timeout" ||
		len(desk.Notifications) != 1 || desk.Notifications[0].Type != domain.NotifyHandedOff ||
		!strings.HasPrefix(desk.Op.LastError.Message, "looked up 1×") || domain.AwaitingLookup(desk.Op, card) {
		t.Fatalf("desk: %v %s desk %v entry %q %d notifications error %+v", err, desk.Op.State, desk.Op.DeskEnteredAt, desk.DeskEntry,
			len(desk.Notifications), desk.Op.LastError)
	}

	auth := card
	auth.LookupAuthoritative = true
	retry, err := domain.Decide(op, domain.ConcludeLookup{Attempt: 1, Conclusion: domain.ConcludedNotFound,
		Tries: []domain.LookupTry{try(domain.LookupNotFound, "")}}, newEnv(auth, t0.Add(time.Second), domain.System))
	if err != nil || retry.Op.State != domain.FailedRetryable || retry.Op.ProviderKey != "hk_1" || retry.Op.NextRetryAt == nil || len(retry.Notifications) != 0 {
		t.Fatalf("authoritative not found: %v %s key %q next %v", err, retry.Op.State, retry.Op.ProviderKey, retry.Op.NextRetryAt)
	}

	// Another attempt's lookup, or one after the desk took it, changes nothing.
	if _, err := domain.Decide(op, domain.ConcludeLookup{Attempt: 2, Conclusion: domain.ConcludedFound,
		Tries: []domain.LookupTry{try(domain.LookupFoundDone, "x")}}, sys); domain.ErrorCode(err) != domain.EInvalidTransition {
		t.Fatalf("another attempt: %v", err)
	}
	if _, err := domain.Decide(desk.Op, domain.ConcludeLookup{Attempt: 1, Conclusion: domain.ConcludedFound,
		Tries: []domain.LookupTry{try(domain.LookupFoundDone, "x")}}, sys); domain.ErrorCode(err) != domain.EInvalidTransition {
		t.Fatalf("after the desk took it: %v", err)
	}
}

func TestJudgeLookup(t *testing.T) {
	card := adapterCard()
	at := func(d time.Duration, r domain.LookupResult) domain.LookupTry {
		return domain.LookupTry{At: t0.Add(d), Result: r}
	}
	judge := func(c domain.Card, now time.Duration, tries ...domain.LookupTry) domain.LookupVerdict {
		return domain.JudgeLookup(c, tries, t0, t0.Add(now), 5*time.Second)
	}
	if v := judge(card, 0, at(0, domain.LookupFoundDone)); !v.Done || v.Conclusion != domain.ConcludedFound {
		t.Fatalf("found: %+v", v)
	}
	if v := judge(card, 0, at(0, domain.LookupConflict)); !v.Done || v.Conclusion != domain.ConcludedDesk {
		t.Fatalf("a conflict goes to a person at once: %+v", v)
	}
	if v := judge(card, 0, at(0, domain.LookupNotFound)); v.Done || !v.Next.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("first miss: %+v", v)
	}
	if v := judge(card, 15*time.Second, at(0, domain.LookupNotFound), at(5*time.Second, domain.LookupError), at(15*time.Second, domain.LookupNotFound)); v.Done || !v.Next.Equal(t0.Add(35*time.Second)) {
		t.Fatalf("third miss waits twice as long: %+v", v)
	}
	if v := judge(card, 118*time.Second, at(0, domain.LookupNotFound), at(118*time.Second, domain.LookupNotFound)); v.Done || !v.Next.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("the last look is at the window's end: %+v", v)
	}
	if v := judge(card, 2*time.Minute, at(2*time.Minute, domain.LookupNotFound)); !v.Done || v.Conclusion != domain.ConcludedDesk {
		t.Fatalf("an unsure not-found after the window: %+v", v)
	}
	auth := card
	auth.LookupAuthoritative = true
	judgeLongBegun := func(c domain.Card, now time.Duration, tries ...domain.LookupTry) domain.LookupVerdict {
		return domain.JudgeLookupCall(c, tries, t0, t0.Add(-time.Hour), t0.Add(now), 5*time.Second) // the call's deadline long past
	}
	if v := judgeLongBegun(auth, 2*time.Minute, at(2*time.Minute, domain.LookupNotFound)); !v.Done || v.Conclusion != domain.ConcludedNotFound {
		t.Fatalf("an authoritative not-found after the window: %+v", v)
	}
	if v := judgeLongBegun(auth, 2*time.Minute, at(0, domain.LookupNotFound), at(2*time.Minute, domain.LookupError)); v.Conclusion != domain.ConcludedDesk {
		t.Fatalf("an error last proves nothing, even on an authoritative card: %+v", v)
	}
}

// TestJudgeLookupWaitsForTheCallDeadline: an authoritative not-found counts
// only once the call's deadline (the last begin + call_timeout, or twice
// the lease) and the window after it have passed; one seen before is
// looked at again at that moment, not concluded and not dropped; a found
// before it still settles at once (invariant 13).
func TestJudgeLookupWaitsForTheCallDeadline(t *testing.T) {
	card := adapterCard()
	card.LookupAuthoritative = true
	card.Lease = 30 * time.Second
	card.LookupAdapter.Window = 0
	began := t0.Add(-40 * time.Second) // the lease lapsed 10s ago; the lookups start now
	judge := func(c domain.Card, now time.Duration, tries ...domain.LookupTry) domain.LookupVerdict {
		return domain.JudgeLookupCall(c, tries, t0, began, t0.Add(now), 5*time.Second)
	}
	at := func(d time.Duration, r domain.LookupResult) domain.LookupTry {
		return domain.LookupTry{At: t0.Add(d), Result: r}
	}

	if got := card.CallDeadline(began); !got.Equal(began.Add(time.Minute)) {
		t.Fatalf("the default call deadline is %v, want twice the lease after begin", got)
	}
	v := judge(card, 0, at(0, domain.LookupNotFound))
	if v.Done || !v.Next.Equal(t0.Add(5*time.Second)) {
		t.Fatalf("a not-found with no window before the deadline: %+v; want looked at again", v)
	}
	v = judge(card, 15*time.Second, at(0, domain.LookupNotFound), at(5*time.Second, domain.LookupNotFound), at(15*time.Second, domain.LookupNotFound))
	if v.Done || !v.Next.Equal(began.Add(time.Minute)) {
		t.Fatalf("the last look before the deadline: %+v; want the next at the deadline %v", v, began.Add(time.Minute))
	}
	if v := judge(card, 20*time.Second, at(0, domain.LookupNotFound), at(20*time.Second, domain.LookupNotFound)); !v.Done || v.Conclusion != domain.ConcludedNotFound {
		t.Fatalf("a not-found at the deadline: %+v", v)
	}
	if v := judge(card, 0, at(0, domain.LookupFoundDone)); !v.Done || v.Conclusion != domain.ConcludedFound {
		t.Fatalf("a found before the deadline: %+v", v)
	}
	if v := judge(card, 0, at(0, domain.LookupError)); !v.Done || v.Conclusion != domain.ConcludedDesk {
		t.Fatalf("an error with no window goes to a person, deadline or not: %+v", v)
	}

	stated := card
	stated.CallTimeout = 2 * time.Minute
	stated.LookupAdapter = &domain.LookupAdapter{Window: 30 * time.Second}
	from := began.Add(2*time.Minute + 30*time.Second)
	if got := stated.NotFoundFrom(began); !got.Equal(from) {
		t.Fatalf("NotFoundFrom = %v, want begin + call_timeout + window %v", got, from)
	}
	if v := judge(stated, from.Sub(t0)-time.Second, at(0, domain.LookupNotFound), at(from.Sub(t0)-time.Second, domain.LookupNotFound)); v.Done || !v.Next.Equal(from) {
		t.Fatalf("a not-found a second before call_timeout + window: %+v", v)
	}
	if v := judge(stated, from.Sub(t0), at(from.Sub(t0), domain.LookupNotFound)); !v.Done || v.Conclusion != domain.ConcludedNotFound {
		t.Fatalf("a not-found at call_timeout + window: %+v", v)
	}
	unsure := card
	unsure.LookupAuthoritative = false
	if v := judge(unsure, 0, at(0, domain.LookupNotFound)); !v.Done || v.Conclusion != domain.ConcludedDesk {
		t.Fatalf("an unsure not-found goes to a person, not waited on: %+v", v)
	}
}

// TestReconcileNotFoundBeforeTheCallDeadline: a workflow's authoritative
// not-found before the last begin's call deadline is recorded, not taken as
// proof: the operation stays unknown_outcome, the event says from when a
// not-found counts; at the deadline the same not-found retries.
func TestReconcileNotFoundBeforeTheCallDeadline(t *testing.T) {
	card := testCard()
	card.Lookup, card.LookupAuthoritative, card.Lease, card.CallTimeout = domain.LookupAPI, true, 30*time.Second, 2*time.Minute
	op, _ := unknownAfterBegin(t, card)
	op.State, op.Lease = domain.UnknownOutcome, nil
	began := t0.Add(-time.Minute)
	notFound := domain.Reconcile{Evidence: "GET /tasks/hk_1 → 404", CallBeganAt: &began}

	ch, err := domain.Decide(op, notFound, newEnv(card, t0, workflow))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Op.State != domain.UnknownOutcome || ch.Events[0].Action != "reconcile_inconclusive" ||
		!strings.Contains(string(ch.Events[0].Detail), `"not_before":"`+began.Add(2*time.Minute).Format(time.RFC3339)) {
		t.Fatalf("a not-found a minute into a 2m call: %s %s %s", ch.Op.State, ch.Events[0].Action, ch.Events[0].Detail)
	}
	ch, err = domain.Decide(op, notFound, newEnv(card, began.Add(2*time.Minute), workflow))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Op.State != domain.FailedRetryable || ch.Events[0].Action != "reconciled" {
		t.Fatalf("a not-found at the call's deadline: %s %s", ch.Op.State, ch.Events[0].Action)
	}
	notFound.CallBeganAt = nil // no begin on record: nothing to wait for
	if ch, err = domain.Decide(op, notFound, newEnv(card, t0, workflow)); err != nil || ch.Op.State != domain.FailedRetryable {
		t.Fatalf("a not-found with no begin on record: %v %v", ch.Op.State, err)
	}
}
