package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/sandbox"
)

// A case is one of the seed cases: it drives the Handoff and the sandbox,
// records what it saw in cr, and states what the card says must hold.
type caseFunc struct {
	name string
	run  func(r *run, ctx context.Context, cr *caseRun) error
}

var cases = []caseFunc{
	{"the same event delivered twice", (*run).sameEventTwice},
	{"two workers at once", (*run).twoWorkers},
	{"a crash before the provider call", (*run).crashBeforeCall},
	{"a timeout after the provider succeeded", (*run).timeoutAfterSuccess},
	{"a multi-action event where one action failed, resumed", (*run).multiActionResumed},
	{"the same key with other content", (*run).sameKeyOtherContent},
	{"a self-trigger loop", (*run).selfTriggerLoop},
	{"a lookup that finds it", (*run).lookupFinds},
	{"a lookup that is unsure", (*run).lookupUnsure},
	{"content revised after approval", (*run).revisedAfterApproval},
	{"a resend after the key's retention has passed", (*run).resendAfterRetention},
	{"a resend inside retention, on a deduplicating provider", (*run).resendInsideRetention},
	{"a validation error: a permanent refusal, held without retry", (*run).validationRefused},
	{"an auth error: a permanent refusal, held without retry", (*run).authRefused},
	{"a provider 5xx before and after begin", (*run).serverError},
	{"a revision after a lost answer, on a provider that remembers keys", (*run).revisionAfterLostAnswer},
	{"a late call: it lands after the first lookup", (*run).lateCall},
}

// run is one drill of one type.
type run struct {
	opts   Options
	card   Card
	sb     *sandbox.Sandbox
	sbc    *sandbox.Client
	prefix string
	keys   *patternKeys // the card's key_pattern; nil without one
	// handoffLooksUp: the Handoff looks this type up itself (lookup.go).
	handoffLooksUp bool
	// faults injects the execute cases' faults (execute.go).
	faults *faults
}

// caseRun collects one case's record.
type caseRun struct {
	mu       sync.Mutex
	res      CaseResult
	failures []string
	na, skip string
}

func (cr *caseRun) step(format string, args ...any) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.res.Steps = append(cr.res.Steps, fmt.Sprintf(format, args...))
}

func (cr *caseRun) answer(s string) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.res.ProviderAnswers = append(cr.res.ProviderAnswers, s)
}

func (cr *caseRun) retried() {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.res.Retries++
}

// expect records a failure when ok is false: what the card promised and
// what happened instead.
func (cr *caseRun) expect(ok bool, format string, args ...any) {
	if !ok {
		cr.failures = append(cr.failures, fmt.Sprintf(format, args...))
	}
}

func (cr *caseRun) matched(ok bool) { cr.res.StoredResultMatch = &ok }

// errSkip ends a case that cannot be run here.
type errSkip struct{ why string }

func (e errSkip) Error() string { return e.why }

// errNA ends a case the card makes meaningless.
type errNA struct{ why string }

func (e errNA) Error() string { return e.why }

func (r *run) runCase(ctx context.Context, n int, c caseFunc) CaseResult {
	cr := &caseRun{res: CaseResult{Number: n, Name: c.name, Steps: []string{}, ProviderAnswers: []string{}}}
	err := c.run(r, ctx, cr)
	res := cr.res
	var skip errSkip
	var na errNA
	switch {
	case errors.As(err, &na):
		res.Verdict, res.Explanation = VerdictNotApplicable, na.why
	case errors.As(err, &skip):
		res.Verdict, res.Explanation = VerdictSkipped, skip.why
	case err != nil:
		res.Verdict = VerdictFail
		res.Explanation = strings.Join(append(cr.failures, "the case could not finish: "+err.Error()), "; ")
	case len(cr.failures) > 0:
		res.Verdict, res.Explanation = VerdictFail, strings.Join(cr.failures, "; ")
	default:
		res.Verdict = VerdictPass
	}
	return res
}

// op is the operation as the drill reads it.
type op struct {
	ID                     string         `json:"id"`
	Key                    string         `json:"key"`
	State                  string         `json:"state"`
	Version                int64          `json:"version"`
	ContentVersion         int            `json:"content_version"`
	ProviderKey            string         `json:"provider_key"`
	ProviderKeyFirstSentAt *time.Time     `json:"provider_key_first_sent_at"`
	Attempts               int            `json:"attempts"`
	NextRetryAt            *time.Time     `json:"next_retry_at"`
	Result                 *client.Result `json:"result"`
	LastError              *struct {
		Class string `json:"class"`
		Code  string `json:"code"`
	} `json:"last_error"`
}

func (o op) path() string { return "/v1/operations/" + url.PathEscape(o.ID) }

func (o op) ref() string {
	if o.Result == nil {
		return ""
	}
	return o.Result.Ref
}

// key is case n's key for the role suffix names: the run's prefix, or,
// for a card with a key_pattern, a key made from the pattern that carries
// the same (run, case, role) token.
func (r *run) key(n int, suffix string) string {
	k := fmt.Sprintf("%s:case%d%s", r.prefix, n, suffix)
	if r.keys != nil {
		if made, err := r.keys.key(k); err == nil {
			return made
		}
	}
	return k
}

func (r *run) content(n int, variant string) map[string]any {
	return map[string]any{"drill": r.prefix, "case": n, "variant": variant}
}

// register registers key without claiming it.
func (r *run) register(ctx context.Context, cr *caseRun, key string, content any, extra map[string]any) (op, error) {
	body := map[string]any{"key": key, "type": r.card.Name, "content": content}
	for k, v := range extra {
		body[k] = v
	}
	var o op
	err := r.opts.Workflow.Call(ctx, http.MethodPost, "/v1/operations", body, &o)
	if err == nil {
		cr.step("register %s → %s", key, o.State)
	}
	return o, err
}

// approve has the approver approve the operation's current content when it
// waits for approval.
func (r *run) approve(ctx context.Context, cr *caseRun, o op) (op, error) {
	if o.State != "awaiting_approval" {
		return o, nil
	}
	if r.opts.Approver == nil {
		return o, errSkip{"the type requires approval and the drill has no approver's credential"}
	}
	var out op
	err := r.opts.Approver.Call(ctx, http.MethodPost, o.path()+"/approve",
		map[string]any{"content_version": o.ContentVersion, "reason": "drill: approve the drill's content"}, &out)
	if err != nil {
		return o, fmt.Errorf("approve: %w", err)
	}
	cr.step("approver approves content version %d → %s", o.ContentVersion, out.State)
	return out, nil
}

// prepare registers key and approves it when the type requires approval.
func (r *run) prepare(ctx context.Context, cr *caseRun, key string, content any) (op, error) {
	o, err := r.register(ctx, cr, key, content, nil)
	if err != nil {
		return o, err
	}
	return r.approve(ctx, cr, o)
}

func (r *run) get(ctx context.Context, id string) (op, error) {
	var o op
	err := r.opts.Workflow.Call(ctx, http.MethodGet, "/v1/operations/"+url.PathEscape(id), nil, &o)
	return o, err
}

// do runs client.Do with the drill's worker, whose first provider call
// carries fault.
func (r *run) do(ctx context.Context, cr *caseRun, key string, content any, fault, worker string) (client.Operation, error) {
	res, err := r.opts.Workflow.Do(ctx, client.Request{Key: key, Type: r.card.Name, Content: content, Worker: worker, LeaseSeconds: 30},
		r.worker(cr, fault))
	switch {
	case res.ID == "":
		cr.step("Do %s → %v", key, err)
	case err != nil:
		cr.step("Do %s → %s (%v)", key, res.State, err)
	default:
		cr.step("Do %s → %s", key, res.State)
	}
	if res.ProviderKey != "" {
		cr.mu.Lock()
		cr.res.ProviderKey = res.ProviderKey
		cr.mu.Unlock()
	}
	var pe *client.ProviderError
	var p *client.Problem
	if errors.As(err, &pe) || (errors.As(err, &p) && p.Code == "not_claimable") {
		err = nil // the provider's error is the case's subject, and so is a refusal
	}
	return res, err
}

// worker is fn for client.Do: it calls the sandbox with the claimed
// content and provider key. When the card says the worker is the retry
// layer it retries the classes the card calls retryable, as an SDK would.
func (r *run) worker(cr *caseRun, fault string) func(context.Context, client.Claim) (client.Result, error) {
	return func(ctx context.Context, claim client.Claim) (client.Result, error) {
		var params any
		_ = json.Unmarshal(claim.Content, &params)
		for try := 1; ; try++ {
			reply := r.sbc.Execute(ctx, claim.ProviderKey, params, fault)
			cr.answer(fmt.Sprintf("execute %s (fault %s): %s", claim.ProviderKey, or(fault, "none"), reply))
			res, err := classify(reply)
			var pe *client.ProviderError
			if errors.As(err, &pe) && r.card.RetryLayer == "worker" && r.card.retryable(pe.Class) && try < r.card.Retry.MaxAttempts {
				cr.step("the worker retries %s itself (retry_layer: worker)", pe.Class)
				cr.retried()
				fault = ""
				continue
			}
			return res, err
		}
	}
}

// classify turns the sandbox's reply into what a worker reports.
func classify(reply sandbox.Reply) (client.Result, error) {
	switch {
	case reply.TimedOut():
		return client.Result{}, &client.ProviderError{Class: "timeout", Message: "no answer from the provider in time"}
	case reply.Lost():
		return client.Result{}, &client.ProviderError{Class: "unknown", Message: reply.Err.Error()}
	case reply.Status == http.StatusOK:
		return client.Result{Ref: reply.Answer.Ref}, nil
	case reply.Status == http.StatusTooManyRequests:
		return client.Result{}, &client.ProviderError{Class: "rate_limited", Code: "429", Message: reply.Message, RetryAfter: reply.RetryAfter}
	case reply.Status == http.StatusUnprocessableEntity:
		return client.Result{}, &client.ProviderError{Class: "conflict", Code: "422", Message: reply.Message}
	case reply.Status == http.StatusUnauthorized || reply.Status == http.StatusForbidden:
		return client.Result{}, &client.ProviderError{Class: "auth", Code: fmt.Sprint(reply.Status), Message: reply.Message}
	case reply.Status >= 500:
		return client.Result{}, &client.ProviderError{Class: "transient", Code: fmt.Sprint(reply.Status), Message: reply.Message}
	}
	return client.Result{}, &client.ProviderError{Class: "validation", Code: fmt.Sprint(reply.Status), Message: reply.Message}
}

// waitDue sleeps until a failed_retryable operation may be claimed again.
func (r *run) waitDue(ctx context.Context, cr *caseRun, o op) error {
	if o.NextRetryAt == nil {
		return nil
	}
	d := time.Until(*o.NextRetryAt) + 50*time.Millisecond
	if d > r.opts.MaxWait {
		return errSkip{fmt.Sprintf("the next retry is due in %s, longer than the drill waits (%s)", d.Round(time.Second), r.opts.MaxWait)}
	}
	if d > 0 {
		cr.step("wait %s for the retry to be due", d.Round(time.Millisecond))
		return sleep(ctx, d)
	}
	return nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// observe records the state reached, the executions under the operation's
// provider key and the retries (attempts beyond the first).
func (r *run) observe(cr *caseRun, o op) int {
	n := 0
	if o.ProviderKey != "" {
		n = r.sb.Executions(o.ProviderKey)
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	cr.res.State, cr.res.Executions, cr.res.ProviderKey = o.State, n, o.ProviderKey
	cr.res.Retries += max(o.Attempts-1, 0)
	return n
}

// firstRef is the reference of the first execution under the key.
func (r *run) firstRef(pk string) string {
	if h := r.sb.History(pk); len(h) > 0 {
		return h[0].Ref
	}
	return ""
}

// duplicate explains executions > 1 in terms of the card's claims.
func (r *run) duplicate(n int, pk string) string {
	c, sb := r.card, r.sb.Config()
	why := ""
	switch {
	case c.RetryLayer == "worker" && c.retryable("timeout") && sb.Idempotency == sandbox.IdempotencyNone:
		why = "the card lists timeout as retryable with retry_layer: worker, but the provider does not deduplicate (sandbox idempotency none): the worker's retry after the lost answer executed the side effect again"
	case c.ProviderIdempotency != "none" && sb.Idempotency == sandbox.IdempotencyNone:
		why = fmt.Sprintf("the card says provider_idempotency: %s, but the provider does not deduplicate (sandbox idempotency none): the re-send under the same key executed again", c.ProviderIdempotency)
	case c.LookupAuthoritative && sb.Lookup != sandbox.LookupAuthoritative:
		why = "the card says lookups are authoritative, but the provider's lookup missed a request it had executed (sandbox lookup " + sb.Lookup + "): Handoff took \"not found\" as proof and the retry executed the side effect again"
	default:
		why = "a retry executed the side effect again"
	}
	return fmt.Sprintf("DUPLICATE EXECUTION: the provider executed %d times under provider key %s; %s", n, pk, why)
}

// expectOnce is the drill's first rule: one business intent, one side effect.
func (r *run) expectOnce(cr *caseRun, n int, pk string) {
	switch {
	case n > 1:
		cr.expect(false, "%s", r.duplicate(n, pk))
	case n == 0:
		cr.expect(false, "the provider never executed the request under %s, but it should have once", pk)
	}
}

// claimShort claims o with the crash lease; begin also records "about to
// call the provider" in the same call, as client.Do does.
func (r *run) claimShort(ctx context.Context, cr *caseRun, o op, worker string, begin bool) (client.Claim, error) {
	var c client.Claim
	err := r.opts.Workflow.Call(ctx, http.MethodPost, o.path()+"/claim",
		map[string]any{"worker": worker, "lease_seconds": r.opts.CrashLease, "begin": begin}, &c)
	if err == nil && begin {
		cr.step("%s claims with a %ds lease and begins in the same call (attempt %d)", worker, r.opts.CrashLease, c.Attempt.Number)
	} else if err == nil {
		cr.step("%s claims with a %ds lease (attempt %d)", worker, r.opts.CrashLease, c.Attempt.Number)
	}
	return c, err
}

func (r *run) waitLease(ctx context.Context, cr *caseRun, c client.Claim) error {
	d := time.Until(c.Lease.ExpiresAt) + 300*time.Millisecond
	d = min(max(d, 300*time.Millisecond), time.Duration(r.opts.CrashLease+2)*time.Second)
	cr.step("the worker crashes; wait %s for its lease to expire", d.Round(10*time.Millisecond))
	return sleep(ctx, d)
}

// follow acts as a workflow that keeps asking: while the operation is
// failed_retryable it waits for the retry and runs Do again; an operation
// handed to a person is asked once more, to show that it is refused.
func (r *run) follow(ctx context.Context, cr *caseRun, o op, key string, content any) (op, error) {
	for range 5 {
		var err error
		if o, err = r.get(ctx, o.ID); err != nil {
			return o, err
		}
		switch o.State {
		case "failed_retryable":
			cr.step("Handoff holds it as failed_retryable (%s): the workflow retries when due", lastCode(o))
			if err := r.waitDue(ctx, cr, o); err != nil {
				return o, err
			}
			if _, err := r.do(ctx, cr, key, content, "", "drill-retrier"); err != nil {
				return o, err
			}
		case "unknown_outcome", "failed_terminal":
			if _, err := r.do(ctx, cr, key, content, "", "drill-retrier"); err != nil {
				return o, err
			}
			return r.get(ctx, o.ID)
		default:
			return o, nil
		}
	}
	return o, nil
}

func lastCode(o op) string {
	if o.LastError == nil {
		return "no error"
	}
	if o.LastError.Code != "" {
		return o.LastError.Class + ", " + o.LastError.Code
	}
	return o.LastError.Class
}

func (c Card) isTerminal(class string) bool {
	for _, t := range c.Terminal {
		if t == class {
			return true
		}
	}
	return false
}

// reconcile reports a lookup to Handoff.
func (r *run) reconcile(ctx context.Context, cr *caseRun, o op, a sandbox.LookupAnswer) (op, error) {
	body := map[string]any{"found": a.Found, "evidence": fmt.Sprintf("drill sandbox lookup of %s: found %t (authoritative %t)", a.Key, a.Found, a.Authoritative)}
	if a.Found {
		body["result"] = map[string]any{"ref": a.Ref}
	}
	var out op
	err := r.opts.Workflow.Call(ctx, http.MethodPost, o.path()+"/reconcile", body, &out)
	if err == nil {
		cr.step("reconcile found=%t → %s", a.Found, out.State)
	}
	return out, err
}
