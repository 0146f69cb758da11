package domain

import (
	"math"
	"time"
)

// The policy: what the server does with an error, whatever the worker asked.

// settleVerdict is the state a settle lands in and why.
type settleVerdict struct {
	state State
	code  string // last_error.code set by the policy, "" to keep the worker's
}

// judgeError applies the card to an error reported in state from (processing
// or action_pending). asked is the outcome the worker requested.
func judgeError(card Card, op Operation, from State, asked Outcome, e ErrorInfo, now time.Time) settleVerdict {
	switch {
	case from == ActionPending && (asked == OutcomeUnknown || e.Class.LeavesDoubt()):
		// The provider may have acted, whatever the card calls the class:
		// a doubt after begin is never terminal (invariant 4). Re-sending is
		// only safe when the provider deduplicates by key and still
		// remembers this one, the contract is known and Handoff is the
		// layer that retries.
		if card.autoResendSafe(op, now) {
			return settleVerdict{state: FailedRetryable, code: CodeResendGuarded}
		}
		return settleVerdict{state: UnknownOutcome}
	case card.IsTerminal(e.Class):
		return settleVerdict{state: FailedTerminal}
	case asked == OutcomeFailedTerminal:
		return settleVerdict{state: FailedTerminal}
	case asked == OutcomeUnknown:
		// Before begin nothing was sent: "unknown" can only mean it failed.
		return settleVerdict{state: FailedRetryable}
	case !card.IsRetryable(e.Class) && e.Class != ClassTimeout && e.Class != ClassUnknown && e.Class != ClassTransient:
		// Classes the card does not call retryable are not retried blindly,
		// except the doubtful ones before anything was sent.
		return settleVerdict{state: FailedTerminal, code: "not_retryable"}
	default:
		return settleVerdict{state: FailedRetryable}
	}
}

// CodeResendGuarded marks a failed_retryable operation whose provider may
// have acted, retried only because the provider deduplicates by key. The
// guard is checked again before the next claim: once the key has left the
// provider's retention window, the operation becomes unknown_outcome.
const CodeResendGuarded = "resend_within_retention"

// ResendLapsed reports whether op is waiting on a resend guard whose
// retention window has closed.
func ResendLapsed(op Operation, card Card, now time.Time) bool {
	return op.LastError != nil && op.LastError.Code == CodeResendGuarded &&
		(op.State == FailedRetryable || op.State == Received) && !card.ResendSafe(op.ProviderKeyFirstSentAt, now)
}

// RetriesExhausted reports whether the card's attempt or elapsed-time limit
// is reached for the operation at now.
func RetriesExhausted(op Operation, card Card, now time.Time) bool {
	if op.Attempts-op.RetryFrom >= card.Retry.MaxAttempts {
		return true
	}
	return card.Retry.MaxElapsed > 0 && op.FirstAttemptAt != nil &&
		now.Sub(*op.FirstAttemptAt) >= card.Retry.MaxElapsed
}

// Backoff is the delay before retry n (1-based): full jitter over an
// exponentially growing window capped at backoff_max, and never shorter than
// the provider's Retry-After. jitter returns a number in [0, 1).
func Backoff(card Card, n int, retryAfter time.Duration, jitter func() float64) time.Duration {
	window := float64(card.Retry.Backoff) * math.Pow(2, float64(max(n-1, 0)))
	window = math.Min(window, float64(card.Retry.BackoffMax))
	d := time.Duration(window * jitter())
	return max(d, retryAfter)
}
