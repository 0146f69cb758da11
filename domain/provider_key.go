package domain

import (
	"fmt"
	"strconv"
)

// A provider key is never sent with content other than the content it was
// first sent with (invariant 9). A provider that deduplicates by key
// answers a re-send under a spent key with the first request's stored
// result (key) or refuses it (key_and_params): a revised content sent under
// it either never runs, though Handoff would record it completed, or comes
// back as an error. So a revision after a send goes out under a new
// provider key derived from the operation and the content version — and
// only once the earlier send is known not to have executed, or the new key
// would make it a second execution.

// CodeRevisionWaits marks an approved revision that waits for a person to
// find out whether the earlier content, sent under the old provider key,
// executed.
const CodeRevisionWaits = "revision_waits_for_outcome"

// ProviderKeyForVersion is the provider key of content version v: the
// operation's own for the first, and for a later one a key derived from
// that key and the version, so the same revision always gets the same key.
func ProviderKeyForVersion(base string, v int) string {
	if v <= 1 {
		return base
	}
	return "hk_" + SHA256Hex([]byte(base + "\x00v" + strconv.Itoa(v)))[:32]
}

// keySpent reports whether op's provider key was first sent with another
// content version than the one it would now run — on a provider whose
// answer to a same-key re-send depends on the key. A provider that does
// not deduplicate executes whatever it gets: its re-send risk is shown
// instead (RetryRisk).
func keySpent(op Operation, card Card) bool {
	return op.ProviderKeyFirstSentAt != nil && op.ProviderKeySentVersion != op.ContentVersion &&
		card.ProviderIdempotency != IdempotencyNone
}

// sendInDoubt reports whether the earlier send under op's provider key may
// have executed as far as op records: a re-send held on the provider's
// deduplication, or a doubtful error class after a send. A validation or
// auth refusal, a rate limit, a person's "not executed" or an
// authoritative lookup proved that nothing happened.
func sendInDoubt(op Operation) bool {
	e := op.LastError
	return op.ProviderKeyFirstSentAt != nil && e != nil &&
		(e.Code == CodeResendGuarded || e.Code == "retention_expired" || e.Class.LeavesDoubt())
}

// renewProviderKey is the follow-up of a change that lets a revised content
// run (state received, or failed_retryable when the next claim retries
// it): when its provider key was spent on another version, the revision
// gets its own key, recorded as an event of its own so the timeline shows
// the change and why. The earlier send is known not to have executed on
// every path here: an approval in doubt waits instead (holdRevision), and
// a person's confirm_not_executed or an authoritative not-found (a
// reconcile, a lookup) proves it.
func renewProviderKey(ch *Change, env Env, why string) {
	if (ch.Op.State != Received && ch.Op.State != FailedRetryable) || !keySpent(ch.Op, env.Card) {
		return
	}
	old := ch.Op.ProviderKey
	next := begin(ch.Op, env, ch.Op.State, "provider_key_changed")
	n := &next.Op
	n.ProviderKey = ProviderKeyForVersion(firstKeyOf(ch.Op), ch.Op.ContentVersion)
	n.ProviderKeyFirstSentAt, n.ProviderKeySentVersion = nil, 0
	next.Events[0].Reason = why
	next.Events[0].Detail = detail(map[string]any{"from": old, "to": n.ProviderKey, "sent_content_version": ch.Op.ProviderKeySentVersion,
		"content_version": ch.Op.ContentVersion, "provider_idempotency": env.Card.ProviderIdempotency.String()})
	ch.Op = next.Op
	ch.Events = append(ch.Events, next.Events...)
}

// renewAfterNotFound renews the key of a revision held while its earlier
// send was in doubt, once the provider answered authoritatively that the
// earlier send did not execute: the retry that follows sends the revision.
func renewAfterNotFound(ch *Change, before Operation, env Env) {
	renewProviderKey(ch, env, fmt.Sprintf("the provider has no record of content version %d, sent under the old provider key: it did not execute",
		before.ProviderKeySentVersion))
}

// firstKeyOf is the provider key of op's content version 1. A key renewed
// for a later version is derived from it, so it is found from the
// operation's identity unless the workflow registered its own key; then
// the current key serves as the base (a renewal of a renewal stays unique
// because the version is part of every derivation).
func firstKeyOf(op Operation) string {
	derived := ProviderKeyFor(op.Namespace, op.Key)
	for v := 1; v <= op.ContentVersion; v++ {
		if ProviderKeyForVersion(derived, v) == op.ProviderKey {
			return derived
		}
	}
	return op.ProviderKey
}

// holdRevision turns an approval whose revision would go out while the
// earlier send may have executed into a wait for a person: unknown_outcome,
// with the reason. Confirming "not executed, retry" then sends the revision
// under its own key; confirming "executed" records the earlier send's
// result.
func holdRevision(ch *Change, before Operation, env Env) {
	if ch.Op.State != Received || !keySpent(ch.Op, env.Card) || !sendInDoubt(before) {
		return
	}
	ch.Op.State = UnknownOutcome
	ch.Events[len(ch.Events)-1].ToState = UnknownOutcome.String()
	ch.Op.LastError = &ErrorInfo{Class: ClassUnknown, Code: CodeRevisionWaits, Message: fmt.Sprintf(
		"content version %d was sent under %s and may have executed; version %d goes out under a new provider key "+
			"once a person confirms version %d did not execute (or records that it did)",
		before.ProviderKeySentVersion, before.ProviderKey, ch.Op.ContentVersion, before.ProviderKeySentVersion)}
}

// ProviderKeyUse says which provider key this attempt of op sends and why:
// what the claim answer and the desk show.
func ProviderKeyUse(op Operation, card Card) string {
	switch {
	case op.ProviderKeyFirstSentAt != nil && op.ProviderKeySentVersion == op.ContentVersion:
		return fmt.Sprintf("re-send of content version %d under the provider key it was first sent with", op.ContentVersion)
	case op.ProviderKeyFirstSentAt != nil && card.ProviderIdempotency == IdempotencyNone:
		return fmt.Sprintf("content version %d under the provider key an earlier version was sent with: %s does not deduplicate, so the key changes nothing there", op.ContentVersion, card.Provider)
	case op.ProviderKeyFirstSentAt != nil:
		return fmt.Sprintf("content version %d under a key first sent with version %d", op.ContentVersion, op.ProviderKeySentVersion)
	case op.ContentVersion > 1 && op.ProviderKey != firstKeyOf(op):
		return fmt.Sprintf("first send of content version %d under a new provider key derived from the operation and the content version: an earlier version was sent under another key and did not execute", op.ContentVersion)
	}
	return fmt.Sprintf("first send of content version %d under the operation's provider key", op.ContentVersion)
}
