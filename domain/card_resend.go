package domain

import (
	"regexp"
	"strings"
	"time"
)

// Who may re-send, and when: the retry layer (only one layer retries, or
// the retries multiply) and what is known of the provider's contract (an
// unknown contract is not a safe one).

// DedupesByKey reports whether the card says the provider deduplicates
// requests by the provider key (key or key_and_params).
func (c Card) DedupesByKey() bool {
	return c.ProviderIdempotency == IdempotencyKey || c.ProviderIdempotency == IdempotencyKeyAndParams
}

// unverifiedDedupRE finds an open question about the provider's
// de-duplication or how long it remembers a key.
var unverifiedDedupRE = regexp.MustCompile(`(?i)de-?dup|idempot|retention|retain|remember|replay|same key|external_id|expire`)

// UnverifiedDedup is the card's first unverified statement about
// de-duplication or key retention, "" when there is none.
func (c Card) UnverifiedDedup() string {
	for _, u := range c.Unverified {
		if unverifiedDedupRE.MatchString(u) {
			return u
		}
	}
	return ""
}

// AutoResendOff says why Handoff never re-sends this type automatically
// after begin, whatever the provider key's retention: "" when it may.
func (c Card) AutoResendOff() string {
	switch {
	case c.Retrier() == RetryByNobody:
		return "retry_layer is none: nobody retries automatically"
	case c.ProviderIdempotency == IdempotencyUnknown:
		return "provider_idempotency is unknown: an unknown contract is not a safe one"
	case c.UnverifiedDedup() != "":
		return "de-duplication is unverified (" + strings.TrimSpace(c.UnverifiedDedup()) + ")"
	}
	return ""
}

// autoResendSafe is ResendSafe for Handoff's own decisions: a re-send
// under the same provider key the system makes without asking anyone.
// The worker's SDK owning the retries is not Handoff's to re-send for.
func (c Card) autoResendSafe(op Operation, now time.Time) bool {
	return c.AutoResendOff() == "" && c.Retrier() == RetryByHandoff && c.ResendSafe(op.ProviderKeyFirstSentAt, now)
}

// The codes of a failure the card's retry layer makes final.
const (
	// CodeWorkerRetriesExhausted: the worker owns the retries (retry_layer
	// worker) and settled a failure as retryable: its SDK already retried
	// inside the lease, so Handoff schedules no retry on top.
	CodeWorkerRetriesExhausted = "worker_retries_exhausted"
	// CodeNoAutomaticRetry: retry_layer none; a person decides.
	CodeNoAutomaticRetry = "no_automatic_retry"
)

// retryRefused is the code that makes a failed_retryable outcome final
// under the card's retry layer, "" when Handoff schedules the retry.
func (c Card) retryRefused() string {
	switch c.Retrier() {
	case RetryByWorker:
		return CodeWorkerRetriesExhausted
	case RetryByNobody:
		return CodeNoAutomaticRetry
	}
	return ""
}
