package domain

import (
	"fmt"
	"time"
)

// A call has a deadline: the card's call_timeout says how long one provider
// call may take, from begin to the provider's last act on it. Until the
// deadline of the last begin has passed, the call may still land, so no
// lookup may conclude that it did not happen (invariant 13).

// MaxCallTimeout is the longest call_timeout a card may state.
const MaxCallTimeout = 24 * time.Hour

// CallTimeoutOrDefault is the card's call_timeout, or twice its lease when
// the card states none: a worker has its lease to make the call, and a
// request sent as the lease ends may still be worked on at the provider
// for as long again.
func (c Card) CallTimeoutOrDefault() time.Duration {
	if c.CallTimeout > 0 {
		return c.CallTimeout
	}
	return 2 * c.Lease
}

// CallDeadline is when a call begun at began can no longer land.
func (c Card) CallDeadline(began time.Time) time.Time {
	return began.Add(c.CallTimeoutOrDefault())
}

// NotFoundFrom is the earliest an authoritative not-found may conclude
// that the call begun at began did not happen: its deadline, plus the
// lookup's window for a provider whose index lags behind its writes.
func (c Card) NotFoundFrom(began time.Time) time.Time {
	var window time.Duration
	if c.LookupAdapter != nil {
		window = c.LookupAdapter.Window
	}
	return c.CallDeadline(began).Add(window)
}

// validateCallTimeout lists the call_timeout's problems: out of range, or
// too short to cover a call on a card whose lookups may conclude "not
// executed".
func validateCallTimeout(c Card) []FieldError {
	var errs []FieldError
	if c.CallTimeout < 0 || c.CallTimeout > MaxCallTimeout || (c.CallTimeout > 0 && c.CallTimeout < time.Second) {
		errs = append(errs, FieldError{Field: "call_timeout", Message: "must be between 1s and 24h (absent: twice the lease)"})
		return errs
	}
	if c.LookupAuthoritative && c.CallTimeout > 0 && c.CallTimeout < c.Lease {
		errs = append(errs, FieldError{Field: "call_timeout", Message: fmt.Sprintf("%s is shorter than lease (%s) on a card with "+
			"lookup_authoritative: a worker may still be inside its call until its lease lapses, so a not-found after a "+
			"deadline of %s could conclude while the call may still land; state a call_timeout of at least the lease",
			c.CallTimeout, c.Lease, c.CallTimeout)})
	}
	return errs
}
