package drill

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"

	"github.com/opshandoff/handoff/client"
)

// Cases 6, 7 and 10: the key with other content, a self-trigger loop, and
// content revised after its approval.

// 6. The same key with other content is refused; nothing runs again.
func (r *run) sameKeyOtherContent(ctx context.Context, cr *caseRun) error {
	cr.res.Expected = "the second registration is refused with fingerprint_mismatch; completed; 1 execution"
	key := r.key(6, "")
	content := r.content(6, "a")
	o, err := r.prepare(ctx, cr, key, content)
	if err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, key, content, "", "drill-w1"); err != nil {
		return err
	}
	_, err = r.register(ctx, cr, key, r.content(6, "b"), nil)
	refused := client.IsCode(err, "fingerprint_mismatch")
	cr.step("register %s with other content → %v", key, err)
	cr.expect(refused, "the same key with other content should be refused with fingerprint_mismatch, got %v", err)
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	cr.expect(o.State == "completed", "the operation should stay completed, it is %s", o.State)
	match := o.ref() == r.firstRef(o.ProviderKey)
	cr.matched(match)
	return nil
}

// 7. A self-trigger loop: an operation caused by one of its own type is
// stopped before it runs.
func (r *run) selfTriggerLoop(ctx context.Context, cr *caseRun) error {
	cr.res.Expected = "the self-triggered operation is failed_terminal with loop_detected and never executed; 0 executions"
	parent, content := r.key(7, ":parent"), r.content(7, "parent")
	if _, err := r.prepare(ctx, cr, parent, content); err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, parent, content, "", "drill-w1"); err != nil {
		return err
	}
	child := r.key(7, ":child")
	o, err := r.register(ctx, cr, child, r.content(7, "child"), map[string]any{"caused_by": parent})
	if err != nil {
		return err
	}
	res, err := r.opts.Workflow.Do(ctx, client.Request{Key: child, Type: r.card.Name, Content: r.content(7, "child"), CausedBy: parent, Worker: "drill-w2"},
		r.worker(cr, ""))
	cr.step("Do %s → %s (%v)", child, res.State, err)
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	n := r.observe(cr, o)
	cr.expect(n == 0, "the self-triggered operation executed %d times; a loop must never reach the provider", n)
	cr.expect(o.State == "failed_terminal" && lastCode(o) != "" && o.LastError != nil && o.LastError.Code == "loop_detected",
		"want failed_terminal with loop_detected, got %s (%s)", o.State, lastCode(o))
	return nil
}

// 10. Content revised after approval needs a new approval; the worker
// runs the approved revision, never the old content.
func (r *run) revisedAfterApproval(ctx context.Context, cr *caseRun) error {
	if r.opts.Operator == nil || r.opts.Approver == nil {
		return errSkip{"revising and approving need an operator's and an approver's credential"}
	}
	cr.res.Expected = "after the revision a worker is refused until the new version is approved; the provider executes the approved revision once"
	key, v1, v2 := r.key(10, ""), r.content(10, "v1"), r.content(10, "v2-revised")
	o, err := r.prepare(ctx, cr, key, v1)
	if err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	var rev op
	if err := r.opts.Operator.Call(ctx, http.MethodPost, o.path()+"/revisions",
		map[string]any{"content": v2, "reason": "drill: revise after approval", "expected_version": o.Version}, &rev); err != nil {
		return fmt.Errorf("revise: %w", err)
	}
	cr.step("operator revises the content → version %d, %s", rev.ContentVersion, rev.State)
	if _, err := r.do(ctx, cr, key, v1, "", "drill-w1"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	before := r.sb.Executions(o.ProviderKey)
	cr.expect(before == 0 && o.State == "awaiting_approval", "before the new approval nothing may run: %d executions, state %s", before, o.State)
	if _, err := r.approve(ctx, cr, o); err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, key, v1, "", "drill-w1"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	n := r.observe(cr, o)
	r.expectOnce(cr, n, o.ProviderKey)
	cr.expect(o.State == "completed", "the approved revision should complete, it is %s", o.State)
	h := r.sb.History(o.ProviderKey)
	ran := len(h) > 0 && sameJSON(h[0].Params, v2)
	cr.expect(ran, "the provider should have executed the approved revision %v", v2)
	match := o.ref() == r.firstRef(o.ProviderKey)
	cr.matched(match && ran)
	return nil
}

func sameJSON(raw json.RawMessage, v any) bool {
	var a, b any
	want, _ := json.Marshal(v)
	return json.Unmarshal(raw, &a) == nil && json.Unmarshal(want, &b) == nil && reflect.DeepEqual(a, b)
}
