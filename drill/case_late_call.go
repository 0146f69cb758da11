package drill

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// 17. A late call: the worker's lease lapses after begin while its call is
// still on its way to the provider, and the first lookup — Handoff's own
// where the card has a lookup_adapter, the workflow's otherwise — finds
// nothing yet. The call lands after that lookup. A not-found is no proof
// while the call may still land (the card's call_timeout after begin): the
// operation is not sent again, and a later look finds the call. 1
// execution.
func (r *run) lateCall(ctx context.Context, cr *caseRun) error {
	const n = 17
	cr.res.Expected = "the lease lapses after begin; the first lookup finds nothing; the call lands after it; nothing is sent again; 1 execution"
	key, content := r.key(n, ""), r.content(n, "a")
	o, err := r.prepare(ctx, cr, key, content)
	if err != nil {
		return err
	}
	c, err := r.claimShort(ctx, cr, o, "drill-late", true)
	if err != nil {
		return err
	}
	var params any
	_ = json.Unmarshal(c.Content, &params)
	cr.step("the worker sends the call; it is slow to reach the provider")
	if err := r.waitLease(ctx, cr, c); err != nil {
		return err
	}
	if o, err = r.leftActionPending(ctx, o); err != nil {
		return err
	}
	cr.step("the lease lapsed after begin → %s (%s)", o.State, lastCode(o))
	land := func() {
		reply := r.sbc.Execute(ctx, c.ProviderKey, params, "")
		cr.answer(fmt.Sprintf("the late call lands: execute %s: %s", c.ProviderKey, reply))
	}
	want := "completed"
	switch {
	case o.State == "failed_retryable": // the provider deduplicates the key: re-sent under it, no lookup
		cr.res.Expected = "the lease lost after begin is re-sent under the same provider key; the late call lands too and the provider deduplicates it; 1 execution"
		land()
	case o.State != "unknown_outcome":
		cr.expect(false, "a lease lost after begin should be unknown_outcome, it is %s", o.State)
		r.observe(cr, o)
		return nil
	case r.handoffLooksUp:
		if o, err = r.lateCallLookedUpByHandoff(ctx, cr, o, land); err != nil {
			return err
		}
	case r.card.Lookup != "none":
		a, err := r.sbc.Lookup(ctx, c.ProviderKey, "")
		if err != nil {
			cr.expect(false, "the card says lookup: %s, but the provider's lookup failed: %v", r.card.Lookup, err)
			r.observe(cr, o)
			return nil
		}
		cr.answer(fmt.Sprintf("the workflow looks %s up before the call lands: found %t, authoritative %t", a.Key, a.Found, a.Authoritative))
		if o, err = r.reconcile(ctx, cr, o, a); err != nil {
			return err
		}
		land()
		if o.State == "unknown_outcome" { // not taken as proof: look again
			if a, err = r.sbc.Lookup(ctx, c.ProviderKey, ""); err != nil {
				return err
			}
			cr.answer(fmt.Sprintf("the workflow looks %s up again: found %t ref %q", a.Key, a.Found, a.Ref))
			if a.Found {
				if o, err = r.reconcile(ctx, cr, o, a); err != nil {
					return err
				}
			}
		}
	default:
		cr.res.Expected = "the lease lapses after begin; no lookup (lookup: none): a person decides; the late call lands; nothing is sent again; 1 execution"
		want = "unknown_outcome"
		land()
	}
	if o, err = r.follow(ctx, cr, o, key, content); err != nil {
		return err
	}
	count := r.observe(cr, o)
	r.expectOnce(cr, count, o.ProviderKey)
	cr.expect(o.State == want, "after the late call landed the operation should be %s, it is %s", want, o.State)
	if o.State == "completed" {
		match := o.ref() != "" && o.ref() == r.firstRef(o.ProviderKey)
		cr.matched(match)
		cr.expect(match, "the stored result %q should be the late call's %q", o.ref(), r.firstRef(o.ProviderKey))
	}
	return nil
}

// lateCallLookedUpByHandoff waits for Handoff's first lookup of o, lands the
// call after it — once a lookup that ignored the call's deadline would have
// concluded (the window after the first look), but before the deadline —
// and waits for Handoff's conclusion.
func (r *run) lateCallLookedUpByHandoff(ctx context.Context, cr *caseRun, o op, land func()) (op, error) {
	callTimeout, _ := time.ParseDuration(r.card.CallTimeout)
	var window time.Duration
	if r.card.LookupAdapter != nil {
		window, _ = time.ParseDuration(r.card.LookupAdapter.Window)
	}
	began := time.Now()
	if o.ProviderKeyFirstSentAt != nil {
		began = *o.ProviderKeyFirstSentAt
	}
	deadline := began.Add(callTimeout)
	if wait := time.Until(deadline.Add(window)); wait > r.opts.MaxWait {
		return o, errSkip{fmt.Sprintf("the call's deadline and the lookup window (%s + %s) end beyond the drill's longest wait (%s)", callTimeout, window, r.opts.MaxWait)}
	}
	for until := time.Now().Add(30 * time.Second); r.sb.Lookups(o.ProviderKey) == 0; {
		if time.Now().After(until) {
			cr.expect(false, "the card has a lookup_adapter, but Handoff did not look %s up", o.ProviderKey)
			r.observe(cr, o)
			return o, nil
		}
		if err := sleep(ctx, 50*time.Millisecond); err != nil {
			return o, err
		}
	}
	first := time.Now()
	cr.step("Handoff looks %s up: no record yet", o.ProviderKey)
	landAt := first.Add(window + 300*time.Millisecond)
	if !landAt.Before(deadline.Add(-500 * time.Millisecond)) {
		landAt = first.Add(max(deadline.Sub(first)/2, 0))
	}
	if err := sleep(ctx, time.Until(landAt)); err != nil {
		return o, err
	}
	land()
	for until := deadline.Add(window + 30*time.Second); ; {
		var err error
		if o, err = r.get(ctx, o.ID); err != nil {
			return o, err
		}
		if o.State != "unknown_outcome" || time.Now().After(until) {
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return o, err
		}
	}
	if ev, ok, err := r.handoffConclusion(ctx, o); err == nil && ok {
		cr.answer(fmt.Sprintf("Handoff's lookup (%s): %s", ev.Action, ev.Detail.Evidence))
		if ev.Action == "looked_up" && ev.Actor.Kind == "system" {
			cr.settled(SettledByLookup)
		}
	}
	cr.step("after the call's deadline (%s after begin) → %s", callTimeout, o.State)
	return o, nil
}

// leftActionPending waits for the sweeper (or the next call) to turn a
// lapsed lease after begin into a state.
func (r *run) leftActionPending(ctx context.Context, o op) (op, error) {
	var err error
	for range 50 {
		if o, err = r.get(ctx, o.ID); err != nil || o.State != "action_pending" {
			return o, err
		}
		if err = sleep(ctx, 100*time.Millisecond); err != nil {
			return o, err
		}
	}
	return o, nil
}
