package drill

import (
	"context"
	"fmt"
	"time"

	"github.com/opshandoff/handoff/sandbox"
)

// Cases 11 and 12: a resend after and inside the provider key's retention.

// 11. A resend after the key's retention has passed: the old key is not
// relied on, the operation goes to a person and is not re-sent.
func (r *run) resendAfterRetention(ctx context.Context, cr *caseRun) error {
	c := r.card
	if !c.dedupes() {
		return errNA{"the card says the provider does not deduplicate (provider_idempotency none): no key retention is relied on"}
	}
	ret := c.retention()
	if ret+time.Second > r.opts.MaxWait {
		return errSkip{fmt.Sprintf("the key retention (%s) is longer than the drill waits (%s); an embedded drill shortens it", ret, r.opts.MaxWait)}
	}
	cr.res.Expected = "inside retention the lost answer is held for a resend; once the retention has passed the resend is refused and the operation goes to a person (unknown_outcome); 1 execution"
	key, content := r.key(11, ""), r.content(11, "a")
	o, err := r.prepare(ctx, cr, key, content)
	if err != nil {
		return err
	}
	sent := time.Now()
	if _, err := r.do(ctx, cr, key, content, sandbox.FaultTimeoutAfter, "drill-w1"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	cr.step("after the lost answer: %s (%s)", o.State, lastCode(o))
	if o.ProviderKeyFirstSentAt != nil && o.ProviderKeyFirstSentAt.After(sent) {
		sent = *o.ProviderKeyFirstSentAt
	}
	wait := time.Until(sent.Add(ret)) + 500*time.Millisecond
	cr.step("wait %s for the key retention (%s) to pass", wait.Round(10*time.Millisecond), ret)
	if err := sleep(ctx, wait); err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, key, content, "", "drill-late"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	cr.expect(o.State == "unknown_outcome", "past the retention the old key must not be relied on: want unknown_outcome, it is %s", o.State)
	return nil
}

// 12. A resend inside retention on a deduplicating provider: the provider
// answers the stored result and executes nothing new.
func (r *run) resendInsideRetention(ctx context.Context, cr *caseRun) error {
	c := r.card
	if !c.dedupes() {
		return errNA{"the card says the provider does not deduplicate (provider_idempotency none): nothing may be re-sent after a lost answer"}
	}
	if !c.autoResends() {
		return errNA{"automatic re-sends after begin are off for this type (" + c.AutomaticResendOff + "): a lost answer goes to a person"}
	}
	cr.res.Expected = "the lost answer is retried under the same provider key; the provider answers the stored result; completed; 1 execution"
	key, content := r.key(12, ""), r.content(12, "a")
	o, err := r.prepare(ctx, cr, key, content)
	if err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, key, content, sandbox.FaultTimeoutAfter, "drill-w1"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	cr.expect(o.State == "failed_retryable", "inside retention the card lets Handoff resend: want failed_retryable, it is %s", o.State)
	if o, err = r.follow(ctx, cr, o, key, content); err != nil {
		return err
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	cr.expect(o.State == "completed", "the resend should complete with the stored result, it is %s", o.State)
	match := o.ref() != "" && o.ref() == r.firstRef(o.ProviderKey)
	cr.matched(match)
	cr.expect(match, "the stored result %q should be the provider's first answer %q", o.ref(), r.firstRef(o.ProviderKey))
	return nil
}
