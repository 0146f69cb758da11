package drill

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// SettledByLookup marks a case whose unknown outcome Handoff settled by
// looking it up itself (the card's lookup_adapter), no person asked.
const SettledByLookup = "lookup"

// lookupConclusions are the timeline actions of Handoff's own lookups.
var lookupConclusions = []string{"looked_up", "lookup_not_found", "lookup_inconclusive"}

type timelineEvent struct {
	Action string `json:"action"`
	Actor  struct {
		Kind string `json:"kind"`
	} `json:"actor"`
	Detail struct {
		Evidence   string           `json:"evidence"`
		Conclusion string           `json:"conclusion"`
		Tries      []map[string]any `json:"tries"`
	} `json:"detail"`
}

// handoffConclusion waits for Handoff's own lookup of o to conclude and
// answers the conclusion's event; ok is false when none came in time.
func (r *run) handoffConclusion(ctx context.Context, o op) (timelineEvent, bool, error) {
	deadline := time.Now().Add(min(r.opts.MaxWait, 30*time.Second))
	for {
		var tl struct {
			Items []timelineEvent `json:"items"`
		}
		if err := r.opts.Workflow.Call(ctx, http.MethodGet, o.path()+"/timeline", nil, &tl); err != nil {
			return timelineEvent{}, false, err
		}
		for i := len(tl.Items) - 1; i >= 0; i-- {
			if slices.Contains(lookupConclusions, tl.Items[i].Action) {
				return tl.Items[i], true, nil
			}
		}
		if time.Now().After(deadline) {
			return timelineEvent{}, false, nil
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return timelineEvent{}, false, err
		}
	}
}

// lookedUpByHandoff is cases 8 and 9 when Handoff looks the type up itself:
// no lookup by the drill, no reconcile call; the case checks that
// Handoff's adapter found the record in the sandbox — on the first try,
// or (lagged, case 9) on a later one inside the card's window, the
// lagging index absorbed — and completed the operation with the
// provider's first reference, executed once.
func (r *run) lookedUpByHandoff(ctx context.Context, cr *caseRun, o op, lagged bool) error {
	ev, ok, err := r.handoffConclusion(ctx, o)
	if err != nil {
		return err
	}
	if !ok {
		cr.expect(false, "the card has a lookup_adapter, but Handoff did not conclude its lookup of %s", o.ProviderKey)
		r.observe(cr, o)
		return nil
	}
	cr.answer(fmt.Sprintf("Handoff's lookup (%s): %s", ev.Action, ev.Detail.Evidence))
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	if ev.Action == "looked_up" && ev.Actor.Kind == "system" {
		cr.settled(SettledByLookup)
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	cr.expect(ev.Action == "looked_up" && o.State == "completed",
		"Handoff's lookup should find the record the sandbox executed and complete the operation; it concluded %s (%s), the operation is %s",
		ev.Action, ev.Detail.Evidence, o.State)
	if lagged {
		cr.expect(len(ev.Detail.Tries) >= 2, "the sandbox's index missed the first read; Handoff should have looked again inside the window: %s", ev.Detail.Evidence)
	}
	match := o.ref() != "" && o.ref() == r.firstRef(o.ProviderKey)
	cr.matched(match)
	cr.expect(match, "the stored result %q should be the provider's %q", o.ref(), r.firstRef(o.ProviderKey))
	return nil
}

// awaitHandoffLookup waits for Handoff's own lookup of o and records it.
func (r *run) awaitHandoffLookup(ctx context.Context, cr *caseRun, o op) error {
	ev, ok, err := r.handoffConclusion(ctx, o)
	if err != nil || !ok {
		return err
	}
	cr.answer(fmt.Sprintf("Handoff's lookup (%s): %s", ev.Action, ev.Detail.Evidence))
	if ev.Action == "looked_up" && ev.Actor.Kind == "system" {
		cr.settled(SettledByLookup)
	}
	return nil
}

func (cr *caseRun) settled(by string) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.res.SettledBy = by
}

// settledByLookup lists the cases Handoff settled by its own lookup.
func settledByLookup(cs []CaseResult) string {
	var out []string
	for _, c := range cs {
		if c.SettledBy == SettledByLookup {
			out = append(out, fmt.Sprint(c.Number))
		}
	}
	return strings.Join(out, ", ")
}
