package drill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
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
	// handoffLooksUp: the Handoff looks this type up itself (lookup.go).
	handoffLooksUp bool
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

func (r *run) key(n int, suffix string) string {
	return fmt.Sprintf("%s:case%d%s", r.prefix, n, suffix)
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

// claimShort claims with a short lease (Options.CrashLease), as a worker
// that is about to crash.
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

func (c Card) isTerminal(class string) bool {
	for _, t := range c.Terminal {
		if t == class {
			return true
		}
	}
	return false
}

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
