package domain_test

import (
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// A revision approved while the earlier send was in doubt waits for its
// outcome (revision_waits_for_outcome). When the provider then answers
// authoritatively that the earlier send did not execute — a person's
// reconcile or the lookup adapter's conclusion — the retry that follows
// sends the revision, so it must go out under its own provider key: the
// old one belongs to the earlier content (invariant 9).
func TestNotFound_heldRevisionGetsItsOwnKey(t *testing.T) {
	card := testCard()
	card.ProviderIdempotency, card.ProviderKeyRetention = domain.IdempotencyKey, 24*time.Hour
	card.LookupAuthoritative = true
	withAdapter := card
	withAdapter.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: "https://crm.example.com/tasks/{provider_key}"}

	held := fixture(domain.UnknownOutcome) // version 1 sent, timed out
	held.ContentVersion, held.Content = 2, []byte(revisedContent)
	held.ContentSHA256 = domain.SHA256Hex(held.Content)
	held.Approval = &domain.Approval{ContentVersion: 2, By: bob.Identity(), At: t0.Add(-time.Minute)}
	held.LastError = &domain.ErrorInfo{Class: domain.ClassUnknown, Code: domain.CodeRevisionWaits}
	oldKey := held.ProviderKey
	newKey := domain.ProviderKeyForVersion(oldKey, 2)

	for _, tc := range []struct {
		name  string
		card  domain.Card
		actor domain.Actor
		cmd   domain.Command
	}{
		{"reconcile", card, bob, domain.Reconcile{Found: false, Evidence: "no such task"}},
		{"lookup", withAdapter, workflow, domain.ConcludeLookup{Attempt: held.Attempts, Conclusion: domain.ConcludedNotFound,
			Tries: []domain.LookupTry{{At: t0, Result: domain.LookupNotFound, Status: 404}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ch, err := domain.Decide(held, tc.cmd, newEnv(tc.card, t0, tc.actor))
			if err != nil {
				t.Fatal(err)
			}
			checkAudit(t, held.AuditHead, held.Version, held.State.String(), ch)
			last := ch.Events[len(ch.Events)-1]
			if ch.Op.State != domain.FailedRetryable || ch.Op.ProviderKey != newKey || ch.Op.ProviderKeyFirstSentAt != nil ||
				last.Action != "provider_key_changed" {
				t.Fatalf("after an authoritative not-found: state %s, key %s (old %s, want %s), first sent %v, last event %s",
					ch.Op.State, ch.Op.ProviderKey, oldKey, newKey, ch.Op.ProviderKeyFirstSentAt, last.Action)
			}
		})
	}

	// The earlier content itself, not revised: its re-send keeps its key.
	sent := fixture(domain.UnknownOutcome)
	ch, err := domain.Decide(sent, domain.Reconcile{Found: false}, newEnv(card, t0, bob))
	if err != nil || ch.Op.ProviderKey != sent.ProviderKey || len(ch.Events) != 1 {
		t.Fatalf("an unrevised not-found changed the key: %v, %s, %d events", err, ch.Op.ProviderKey, len(ch.Events))
	}
}
