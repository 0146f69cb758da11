package drill

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/opshandoff/handoff/sandbox"
)

// The cases of permanent errors, server errors and a revision under a
// spent key: seed 000's case 5 and seed 003's separate cases.

// 13 and 14. A permanent refusal (the provider rejected the request and
// did nothing): held for a person at once, never retried — unless the card
// calls the class retryable, which the drill reports as the card's error.
func (r *run) validationRefused(ctx context.Context, cr *caseRun) error {
	return r.refused(ctx, cr, 13, "validation", sandbox.FaultValidation)
}

func (r *run) authRefused(ctx context.Context, cr *caseRun) error {
	return r.refused(ctx, cr, 14, "auth", sandbox.FaultAuth)
}

func (r *run) refused(ctx context.Context, cr *caseRun, n int, class, fault string) error {
	cr.res.Expected = fmt.Sprintf("the provider refuses with %s and executes nothing; failed_terminal at once, no retry; 0 executions", class)
	key, content := r.key(n, ""), r.content(n, "a")
	o, err := r.prepare(ctx, cr, key, content)
	if err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, key, content, fault, "drill-w1"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	cr.step("after the %s refusal: %s (%s)", class, o.State, lastCode(o))
	executions := r.observe(cr, o)
	cr.expect(!r.card.retryable(class), "the card lists %s as retryable: a request the provider refused as %s is refused again on every retry; list it as terminal", class, class)
	cr.expect(o.State == "failed_terminal", "a %s refusal should be held for a person (failed_terminal), it is %s", class, o.State)
	cr.expect(o.Attempts == 1 && o.NextRetryAt == nil, "a %s refusal must not be retried: %d attempts, next retry %v", class, o.Attempts, o.NextRetryAt)
	cr.expect(executions == 0, "the provider executed %d times, though it refused", executions)
	return nil
}

// 15. A provider 5xx. Before begin nothing was sent: the card's retry
// rules apply. After begin the provider may have acted whatever it said:
// Handoff re-sends only where the card makes that safe (a known,
// deduplicating contract and Handoff as the retry layer); otherwise a
// person decides.
func (r *run) serverError(ctx context.Context, cr *caseRun) error {
	c := r.card
	after, afterRuns := "unknown_outcome", 0
	switch {
	case c.RetryLayer == "worker" && c.retryable("transient") && c.Retry.MaxAttempts > 1:
		// The worker's SDK retries the 503 inside its lease (the provider
		// said it did nothing) and the retry executes once.
		after, afterRuns = "completed", 1
	case c.autoResends() && c.Retry.MaxAttempts > 1:
		after = "failed_retryable"
	}
	before := "failed_retryable"
	switch {
	case c.isTerminal("transient"), c.RetryLayer == "worker", c.RetryLayer == "none", c.Retry.MaxAttempts == 1:
		before = "failed_terminal"
	}
	cr.res.Expected = fmt.Sprintf("a 503 before begin → %s; a 503 after begin → %s; %d executions", before, after, afterRuns)
	// Before begin: the worker settles the 503 it got from a pre-flight
	// call, without ever beginning.
	keyB := r.key(15, ":before")
	o, err := r.prepare(ctx, cr, keyB, r.content(15, "before"))
	if err != nil {
		return err
	}
	var claim struct {
		Lease struct {
			Token int64 `json:"token"`
		} `json:"lease"`
	}
	if err := r.opts.Workflow.Call(ctx, http.MethodPost, o.path()+"/claim", map[string]any{"worker": "drill-w1"}, &claim); err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	var settled op
	if err := r.opts.Workflow.Call(ctx, http.MethodPost, o.path()+"/settle", map[string]any{"lease_token": claim.Lease.Token,
		"outcome": "failed_retryable", "error": map[string]any{"class": "transient", "code": "503", "message": "pre-flight: unavailable"}}, &settled); err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	cr.step("503 before begin → %s (%s)", settled.State, lastCode(settled))
	cr.expect(settled.State == before, "a 503 before begin should be %s by the card, it is %s", before, settled.State)
	// After begin: the provider call itself answers 503.
	keyA, content := r.key(15, ":after"), r.content(15, "after")
	if o, err = r.prepare(ctx, cr, keyA, content); err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, keyA, content, sandbox.FaultServerError, "drill-w1"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	cr.step("503 after begin → %s (%s)", o.State, lastCode(o))
	n := r.observe(cr, o)
	cr.expect(o.State == after, "a 503 after begin should be %s by the card (automatic re-send %v), it is %s", after, c.autoResends(), o.State)
	cr.expect(n == afterRuns, "the provider executed %d times, want %d", n, afterRuns)
	return nil
}

// 16. A revision after a lost answer, on a provider that remembers keys:
// the revision must never go out under the key the first content was sent
// with — a key provider would answer the first content's stored result
// (and Handoff would record content that never ran as completed), a
// key_and_params provider would refuse it. It waits for a person, who
// finds the first request executed.
func (r *run) revisionAfterLostAnswer(ctx context.Context, cr *caseRun) error {
	c := r.card
	switch {
	case !c.dedupes():
		return errNA{"the provider does not remember keys (provider_idempotency " + c.ProviderIdempotency + "): a re-send under a spent key is the re-send risk the desk shows"}
	case !c.autoResends():
		return errNA{"a lost answer goes straight to a person for this type (" + or(c.AutomaticResendOff, "no automatic re-send") + "): its content cannot be revised before they decide"}
	case r.opts.Operator == nil || r.opts.Approver == nil:
		return errSkip{"revising and approving need an operator's and an approver's credential"}
	}
	cr.res.Expected = "the approved revision is not sent under the spent key: it waits (unknown_outcome, revision_waits_for_outcome); the provider never replays or refuses a re-send Handoff made; 1 execution"
	key, v1, v2 := r.key(16, ""), r.content(16, "v1"), r.content(16, "v2-revised")
	o, err := r.prepare(ctx, cr, key, v1)
	if err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, key, v1, sandbox.FaultTimeoutAfter, "drill-w1"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	spent := o.ProviderKey
	var rev op
	if err := r.opts.Operator.Call(ctx, http.MethodPost, o.path()+"/revisions",
		map[string]any{"content": v2, "reason": "drill: revise after a lost answer", "expected_version": o.Version}, &rev); err != nil {
		return fmt.Errorf("revise: %w", err)
	}
	cr.step("operator revises the content → version %d, %s", rev.ContentVersion, rev.State)
	if o, err = r.approve(ctx, cr, rev); err != nil {
		return err
	}
	if _, err := r.do(ctx, cr, key, v1, "", "drill-w2"); err != nil {
		return err
	}
	if o, err = r.get(ctx, o.ID); err != nil {
		return err
	}
	cr.step("after the approval: %s (%s), provider key %s", o.State, lastCode(o), o.ProviderKey)
	n := r.observe(cr, o)
	cr.expect(n == 1, "the provider executed %d times under %s, want the first content once", n, spent)
	for _, a := range cr.res.ProviderAnswers {
		bad := strings.Contains(a, "): 422 ") || strings.Contains(a, "): 200 replayed")
		cr.expect(!bad, "the provider answered a re-send Handoff made under the spent key: %s", a)
	}
	cr.expect(o.State == "unknown_outcome" && o.LastError != nil && o.LastError.Code == "revision_waits_for_outcome",
		"the revision should wait for a person to find out whether v1 executed, it is %s (%s)", o.State, lastCode(o))
	cr.expect(o.ProviderKey == spent && r.sb.Executions(spent) == 1, "nothing more may go out under %s", spent)
	return nil
}
