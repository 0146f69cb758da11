package drill

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/opshandoff/handoff/sandbox"
)

// Cases 8 and 9: a crash after the provider call, then a lookup that finds
// the call or cannot tell.

// crashAfterCall claims with a short lease, beginning in the same call as
// client.Do does, calls the provider (which executes and answers), and
// crashes before settling: the lease lapses in action_pending, which is an
// unknown outcome.
func (r *run) crashAfterCall(ctx context.Context, cr *caseRun, n int) (op, error) {
	key, content := r.key(n, ""), r.content(n, "a")
	o, err := r.prepare(ctx, cr, key, content)
	if err != nil {
		return o, err
	}
	c, err := r.claimShort(ctx, cr, o, "drill-crasher", true)
	if err != nil {
		return o, err
	}
	cr.step("call the provider")
	var params any
	_ = json.Unmarshal(c.Content, &params)
	if n == 9 && r.handoffLooksUp {
		r.sb.LagIndex(c.ProviderKey, 1) // the provider's index lags: Handoff's first look misses
	}
	reply := r.sbc.Execute(ctx, c.ProviderKey, params, "")
	cr.answer(fmt.Sprintf("execute %s: %s", c.ProviderKey, reply))
	if err := r.waitLease(ctx, cr, c); err != nil {
		return o, err
	}
	// The sweeper (or the next call) turns the lapsed lease into a state.
	for range 50 {
		if o, err = r.get(ctx, o.ID); err != nil || o.State != "action_pending" {
			break
		}
		if err = sleep(ctx, 100*time.Millisecond); err != nil {
			break
		}
	}
	if err != nil {
		return o, err
	}
	cr.step("the lease lapsed after begin → %s (%s)", o.State, lastCode(o))
	if r.card.resendsLostLease(o, time.Now()) {
		cr.expect(o.State == "failed_retryable" && o.LastError != nil && o.LastError.Code == "resend_within_retention",
			"the card says the provider deduplicates the key for %s and %d of %d attempts are spent: a lease lost after begin should be re-sent (failed_retryable, resend_within_retention), it is %s (%s)",
			r.card.ProviderKeyRetention, o.Attempts, r.card.Retry.MaxAttempts, o.State, lastCode(o))
		return o, nil
	}
	cr.expect(o.State == "unknown_outcome" || (r.handoffLooksUp && o.State == "completed"),
		"a lease lost after begin should be unknown_outcome, it is %s", o.State)
	return o, nil
}

// resendsLostLease reports whether the card lets Handoff's system policy
// re-send an operation whose lease was lost after begin, instead of handing
// it to a person: the provider deduplicates by key, the key is still inside
// its retention window, and an attempt remains.
func (c Card) resendsLostLease(o op, now time.Time) bool {
	return c.autoResends() && o.ProviderKeyFirstSentAt != nil && now.Before(o.ProviderKeyFirstSentAt.Add(c.retention())) &&
		o.Attempts < c.Retry.MaxAttempts
}

// resentAfterLostLease follows an operation the system re-sent after its
// lease was lost after begin: the workflow retries under the same provider
// key, the provider answers its first result, nothing runs twice.
func (r *run) resentAfterLostLease(ctx context.Context, cr *caseRun, o op, n int) error {
	o, err := r.follow(ctx, cr, o, r.key(n, ""), r.content(n, "a"))
	if err != nil {
		return err
	}
	count := r.observe(cr, o)
	r.expectOnce(cr, count, o.ProviderKey)
	cr.expect(o.State == "completed", "the re-send under the same provider key should complete with the stored result, it is %s", o.State)
	match := o.ref() != "" && o.ref() == r.firstRef(o.ProviderKey)
	cr.matched(match)
	cr.expect(match, "the stored result %q should be the provider's first answer %q", o.ref(), r.firstRef(o.ProviderKey))
	return nil
}

// lostLeaseResent is the expectation of a crash after the provider call on
// a card whose system policy re-sends it (resendsLostLease, for the attempt
// the crash spends).
func (c Card) lostLeaseResent() bool { return c.autoResends() && c.Retry.MaxAttempts > 1 }

const expectResent = "the lease lost after begin is re-sent under the same provider key, which the provider still deduplicates; completed with its first answer; 1 execution"

// 8. A lookup that finds it: the unknown outcome is completed with the
// provider's record.
func (r *run) lookupFinds(ctx context.Context, cr *caseRun) error {
	if r.card.Lookup == "none" {
		return errNA{"the card says there is no lookup (lookup: none): an unknown outcome goes to a person"}
	}
	cr.res.Expected = "unknown_outcome after the crash; the lookup finds the record; completed with the provider's reference; 1 execution"
	if r.card.lostLeaseResent() {
		cr.res.Expected = expectResent
	}
	o, err := r.crashAfterCall(ctx, cr, 8)
	if err != nil {
		return err
	}
	if o.State == "failed_retryable" {
		return r.resentAfterLostLease(ctx, cr, o, 8)
	}
	if r.handoffLooksUp {
		cr.res.Expected = "unknown_outcome after the crash; Handoff's own lookup finds the record; completed by the system with the provider's reference; 1 execution"
		return r.lookedUpByHandoff(ctx, cr, o, false)
	}
	a, err := r.sbc.Lookup(ctx, o.ProviderKey, "")
	if err != nil {
		cr.expect(false, "the card says lookup: %s, but the provider's lookup failed: %v", r.card.Lookup, err)
		r.observe(cr, o)
		return nil
	}
	cr.answer(fmt.Sprintf("lookup %s: found %t ref %q", a.Key, a.Found, a.Ref))
	if o, err = r.reconcile(ctx, cr, o, a); err != nil {
		return err
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	cr.expect(o.State == "completed", "the found record should complete the operation, it is %s", o.State)
	match := o.ref() != "" && o.ref() == r.firstRef(o.ProviderKey)
	cr.matched(match)
	cr.expect(match, "the stored result %q should be the provider's %q", o.ref(), r.firstRef(o.ProviderKey))
	return nil
}

// 9. A lookup that is unsure: "not found" from a lookup that can miss
// proves nothing, so a person decides; nothing is re-sent.
func (r *run) lookupUnsure(ctx context.Context, cr *caseRun) error {
	if r.card.Lookup == "none" {
		return errNA{"the card says there is no lookup (lookup: none): an unknown outcome goes to a person"}
	}
	cr.res.Expected = "a lookup that misses the record leaves unknown_outcome for a person (or, on an authoritative lookup, finds it); never a second execution"
	if r.card.lostLeaseResent() {
		cr.res.Expected = expectResent
	}
	o, err := r.crashAfterCall(ctx, cr, 9)
	if err != nil {
		return err
	}
	if o.State == "failed_retryable" {
		return r.resentAfterLostLease(ctx, cr, o, 9)
	}
	if r.handoffLooksUp {
		cr.res.Expected = "unknown_outcome after the crash; Handoff's own lookup misses the record in a lagging index, looks again inside the window and finds it; completed; never a second execution"
		return r.lookedUpByHandoff(ctx, cr, o, true)
	}
	a, err := r.sbc.Lookup(ctx, o.ProviderKey, sandbox.FaultLookupMiss)
	if err != nil {
		cr.expect(false, "the card says lookup: %s, but the provider's lookup failed: %v", r.card.Lookup, err)
		r.observe(cr, o)
		return nil
	}
	cr.answer(fmt.Sprintf("lookup %s (lagging index): found %t ref %q, authoritative %t", a.Key, a.Found, a.Ref, a.Authoritative))
	if o, err = r.reconcile(ctx, cr, o, a); err != nil {
		return err
	}
	if o, err = r.follow(ctx, cr, o, r.key(9, ""), r.content(9, "a")); err != nil {
		return err
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	if a.Found {
		cr.expect(o.State == "completed", "the found record should complete the operation, it is %s", o.State)
		match := o.ref() != "" && o.ref() == r.firstRef(o.ProviderKey)
		cr.matched(match)
		cr.expect(match, "the stored result %q should be the provider's %q", o.ref(), r.firstRef(o.ProviderKey))
	} else {
		cr.expect(o.State == "unknown_outcome", "an unsure \"not found\" should leave the operation to a person (unknown_outcome), it is %s", o.State)
	}
	return nil
}
