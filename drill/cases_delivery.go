package drill

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"

	"github.com/opshandoff/handoff/sandbox"
)

// Cases 1–5: one event delivered twice, two workers, a crash before the
// call, a lost answer after it, and a multi-action event resumed.

// 1. The same event delivered twice: the second delivery answers the
// stored result and the provider is not called again.
func (r *run) sameEventTwice(ctx context.Context, cr *caseRun) error {
	cr.res.Expected = "completed once; the second delivery answers the stored result without calling the provider; 1 execution"
	key, content := r.key(1, ""), r.content(1, "a")
	if _, err := r.prepare(ctx, cr, key, content); err != nil {
		return err
	}
	first, err := r.do(ctx, cr, key, content, "", "drill-w1")
	if err != nil {
		return err
	}
	second, err := r.do(ctx, cr, key, content, "", "drill-w2")
	if err != nil {
		return err
	}
	o, err := r.get(ctx, first.ID)
	if err != nil {
		return err
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	cr.expect(o.State == "completed", "the operation should be completed, it is %s", o.State)
	match := second.Result != nil && second.Result.Ref != "" && second.Result.Ref == o.ref() && o.ref() == r.firstRef(o.ProviderKey)
	cr.matched(match)
	cr.expect(match, "the second delivery should answer the stored result %s (the provider's %s), it answered %v", o.ref(), r.firstRef(o.ProviderKey), second.Result)
	return nil
}

// 2. Two workers at once: one runs it, the other is refused or gets the
// stored result.
func (r *run) twoWorkers(ctx context.Context, cr *caseRun) error {
	cr.res.Expected = "exactly one worker calls the provider; completed; 1 execution"
	key, content := r.key(2, ""), r.content(2, "a")
	o, err := r.prepare(ctx, cr, key, content)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { _, errs[i] = r.do(ctx, cr, key, content, "", fmt.Sprintf("drill-w%d", i+1)) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	cr.expect(o.State == "completed", "the operation should be completed, it is %s", o.State)
	match := o.ref() != "" && o.ref() == r.firstRef(o.ProviderKey)
	cr.matched(match)
	cr.expect(match, "the stored result %q should be the provider's %q", o.ref(), r.firstRef(o.ProviderKey))
	return nil
}

// 3. A crash before the provider call: the lease lapses, another worker
// runs it; nothing was sent twice. A card allowing one attempt spends it
// on the crash: the operation comes to a person, nothing sent.
func (r *run) crashBeforeCall(ctx context.Context, cr *caseRun) error {
	again := r.card.Retry.MaxAttempts > 1
	wantState, wantN, wantAttempts := "completed", 1, 2
	cr.res.Expected = "after the lease lapses another worker completes it; 2 attempts; 1 execution"
	if !again {
		wantState, wantN, wantAttempts = "failed_terminal", 0, 1
		cr.res.Expected = "the card allows one attempt and the crash spent it: failed_terminal for a person; 0 executions"
	}
	key, content := r.key(3, ""), r.content(3, "a")
	o, err := r.prepare(ctx, cr, key, content)
	if err != nil {
		return err
	}
	c, err := r.claimShort(ctx, cr, o, "drill-crasher", false)
	if err != nil {
		return err
	}
	if err := r.waitLease(ctx, cr, c); err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, key, content, "", "drill-w2"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	n := r.observe(cr, o)
	cr.expect(n == wantN, "the provider executed %d times under %s, want %d", n, o.ProviderKey, wantN)
	if n > 1 {
		cr.expect(false, "%s", r.duplicate(n, o.ProviderKey))
	}
	cr.expect(o.State == wantState, "want %s after the crash (max_attempts %d), it is %s", wantState, r.card.Retry.MaxAttempts, o.State)
	cr.expect(o.Attempts == wantAttempts, "want %d attempts, got %d", wantAttempts, o.Attempts)
	if again {
		match := o.ref() != "" && o.ref() == r.firstRef(o.ProviderKey)
		cr.matched(match)
		cr.expect(match, "the stored result %q should be the provider's %q", o.ref(), r.firstRef(o.ProviderKey))
	}
	return nil
}

// 4. A timeout after the provider succeeded: the answer is lost. A
// deduplicating provider inside retention may be asked again (and answers
// the stored result); otherwise the operation waits for a person.
func (r *run) timeoutAfterSuccess(ctx context.Context, cr *caseRun) error {
	c := r.card
	workerRetries := c.RetryLayer == "worker" && c.retryable("timeout") && c.Retry.MaxAttempts > 1
	want := "unknown_outcome"
	if c.autoResends() || workerRetries {
		want = "completed"
	}
	cr.res.Expected = fmt.Sprintf("%s; never a second execution; 1 execution", want)
	lookedUp := want == "unknown_outcome" && r.handoffLooksUp
	if lookedUp {
		want = "completed"
		cr.res.Expected = "unknown_outcome, then Handoff's own lookup finds the record: completed by the system; never a second execution; 1 execution"
	}
	key, content := r.key(4, ""), r.content(4, "a")
	o, err := r.prepare(ctx, cr, key, content)
	if err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, key, content, sandbox.FaultTimeoutAfter, "drill-w1"); err != nil {
		return err
	}
	if lookedUp {
		if err := r.awaitHandoffLookup(ctx, cr, o); err != nil {
			return err
		}
	}
	if o, err = r.follow(ctx, cr, o, key, content); err != nil {
		return err
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	cr.expect(o.State == want, "the card (provider_idempotency %s, retry_layer %s) says the lost answer ends in %s, it is %s", c.ProviderIdempotency, c.RetryLayer, want, o.State)
	if o.State == "completed" {
		match := o.ref() == r.firstRef(o.ProviderKey)
		cr.matched(match)
		cr.expect(match, "the stored result %q should be the provider's first %q", o.ref(), r.firstRef(o.ProviderKey))
	}
	return nil
}

// 5. A multi-action event where one action failed: resuming the event runs
// only the unfinished action; the finished one is not executed again.
func (r *run) multiActionResumed(ctx context.Context, cr *caseRun) error {
	c := r.card
	resumable := c.retryable("rate_limited") && !c.isTerminal("rate_limited") && c.Retry.MaxAttempts > 1
	wantB, wantBN := "failed_terminal", 0
	if resumable {
		wantB, wantBN = "completed", 1
	}
	cr.res.Expected = fmt.Sprintf("action first completed with 1 execution; action second (rate limited) %s with %d executions after the resume", wantB, wantBN)
	event := r.key(5, "")
	if r.keys != nil && (!r.keys.matches(event+":first") || !r.keys.matches(event+":second")) {
		return errNA{fmt.Sprintf("the card's key_pattern (%s) admits no event whose two actions both make a key (<event_id>:<action>)", c.KeyPattern)}
	}
	var ev struct {
		Operations []op `json:"operations"`
	}
	actions := []map[string]any{
		{"action": "first", "type": c.Name, "content": r.content(5, "first")},
		{"action": "second", "type": c.Name, "content": r.content(5, "second")},
	}
	if err := r.opts.Workflow.Call(ctx, http.MethodPost, "/v1/events",
		map[string]any{"event_id": event, "source": "drill", "actions": actions}, &ev); err != nil {
		return err
	}
	cr.step("deliver event %s with actions first and second", event)
	if len(ev.Operations) != 2 {
		return fmt.Errorf("the event registered %d operations, want 2", len(ev.Operations))
	}
	for _, o := range ev.Operations {
		if _, err := r.approve(ctx, cr, o); err != nil {
			return err
		}
	}
	faults := map[string]string{"first": "", "second": sandbox.FaultRateLimited}
	for _, a := range actions {
		name := a["action"].(string)
		if _, err := r.do(ctx, cr, event+":"+name, a["content"], faults[name], "drill-w1"); err != nil {
			return err
		}
	}
	// Resume: read the event, run every action again as a naive workflow
	// would; Handoff answers the finished one with its stored result.
	for range 3 {
		var cur struct {
			Operations []op `json:"operations"`
		}
		if err := r.opts.Workflow.Call(ctx, http.MethodGet, "/v1/events/"+url.PathEscape(event), nil, &cur); err != nil {
			return err
		}
		pending := false
		for _, o := range cur.Operations {
			if o.State == "failed_retryable" {
				pending = true
				if err := r.waitDue(ctx, cr, o); err != nil {
					return err
				}
			}
		}
		cr.step("resume the event")
		for _, a := range actions {
			if _, err := r.do(ctx, cr, event+":"+a["action"].(string), a["content"], "", "drill-resumer"); err != nil {
				return err
			}
		}
		if !pending {
			break
		}
	}
	var final struct {
		Operations []op `json:"operations"`
	}
	if err := r.opts.Workflow.Call(ctx, http.MethodGet, "/v1/events/"+url.PathEscape(event), nil, &final); err != nil {
		return err
	}
	byKey := map[string]op{}
	for _, o := range final.Operations {
		byKey[o.Key] = o
	}
	a, b := byKey[event+":first"], byKey[event+":second"]
	na := r.sb.Executions(a.ProviderKey)
	r.expectOnce(cr, na, a.ProviderKey)
	cr.expect(a.State == "completed", "action first should be completed, it is %s", a.State)
	nb := r.observe(cr, b)
	cr.expect(nb == wantBN, "action second executed %d times, want %d (retryable %v, max_attempts %d)", nb, wantBN, c.Retryable, c.Retry.MaxAttempts)
	cr.expect(b.State == wantB, "action second should be %s, it is %s", wantB, b.State)
	cr.res.Executions = na + nb
	cr.step("first: %s, %d execution(s); second: %s, %d execution(s)", a.State, na, b.State, nb)
	match := a.ref() == r.firstRef(a.ProviderKey) && (b.State != "completed" || b.ref() == r.firstRef(b.ProviderKey))
	cr.matched(match)
	cr.expect(match, "the stored results should be the provider's")
	return nil
}
