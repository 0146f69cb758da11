package drill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/opshandoff/handoff/sandbox"
)

// The cases of a type whose card has an execute_adapter, when the Handoff
// makes the call itself against the drill's sandbox (Options.ExecuteRoute):
// each sends POST /v1/execute/{type} as a workflow tool would, with no
// worker code, and the sandbox injects the fault by the provider key.

var executeCases = []caseFunc{
	{"one request executes once; the tool's resend is a replay", (*run).executeOnce},
	{"a timeout after the provider executed", (*run).executeTimeoutAfter},
	{"a 429: Handoff retries it itself", (*run).executeRateLimited},
	{"a 5xx after the request was sent", (*run).executeServerError},
	{"a permanent refusal (400)", (*run).executeRefused},
}

// faults is the drill sandbox's fault front for Handoff's own calls: the
// first request for a case's content carries the fault set for the case.
type faults struct {
	mu      sync.Mutex
	byCase  map[int]string
	handler http.Handler
}

func (f *faults) set(n int, fault string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byCase[n] = fault
}

func (f *faults) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/execute" && r.Header.Get(sandbox.FaultHeader) == "" {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var req struct {
			Params struct {
				Case int `json:"case"`
			} `json:"params"`
		}
		_ = json.Unmarshal(body, &req)
		f.mu.Lock()
		if fault := f.byCase[req.Params.Case]; fault != "" {
			r.Header.Set(sandbox.FaultHeader, fault)
			delete(f.byCase, req.Params.Case)
		}
		f.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	f.handler.ServeHTTP(w, r)
}

// executeAnswer is one answer of POST /v1/execute/{type}.
type executeAnswer struct {
	Status   int
	Replayed bool
	Op       op
	Reason   string
}

// execute sends one POST /v1/execute/{type} with the key in
// Idempotency-Key, as a workflow tool does.
func (r *run) execute(ctx context.Context, cr *caseRun, key string, content any, async bool) (executeAnswer, error) {
	raw, _ := json.Marshal(content)
	c := r.opts.Workflow
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.BaseURL+"/v1/execute/"+url.PathEscape(r.card.Name), bytes.NewReader(raw))
	if err != nil {
		return executeAnswer{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	if async {
		req.Header.Set("Prefer", "respond-async")
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return executeAnswer{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	a := executeAnswer{Status: resp.StatusCode, Replayed: resp.Header.Get("Idempotent-Replayed") == "true"}
	if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusAccepted {
		_ = json.Unmarshal(body, &a.Op)
	} else {
		var p struct {
			Code      string `json:"code"`
			Reason    string `json:"reason"`
			Operation *op    `json:"operation"`
		}
		_ = json.Unmarshal(body, &p)
		if p.Operation == nil {
			return a, fmt.Errorf("POST /v1/execute/%s answered %d %s", r.card.Name, resp.StatusCode, p.Code)
		}
		a.Op, a.Reason = *p.Operation, p.Reason
	}
	replay := ""
	if a.Replayed {
		replay = ", replayed"
	}
	cr.step("POST /v1/execute/%s %s → %d %s%s", r.card.Name, key, a.Status, a.Op.State, replay)
	if a.Op.ProviderKey != "" {
		cr.mu.Lock()
		cr.res.ProviderKey = a.Op.ProviderKey
		cr.mu.Unlock()
	}
	return a, nil
}

// settled polls the operation until it is final or waits for a person.
func (r *run) settled(ctx context.Context, cr *caseRun, id string) (op, error) {
	deadline := time.Now().Add(r.opts.MaxWait)
	for {
		o, err := r.get(ctx, id)
		if err != nil {
			return o, err
		}
		switch o.State {
		case "completed", "failed_terminal", "cancelled", "awaiting_approval":
			return o, nil
		case "unknown_outcome":
			var d struct {
				DeskEnteredAt *time.Time `json:"desk_entered_at"`
			}
			if err := r.opts.Workflow.Call(ctx, http.MethodGet, o.path(), nil, &d); err == nil && d.DeskEnteredAt != nil {
				return o, nil
			}
		}
		if time.Now().After(deadline) {
			return o, errSkip{fmt.Sprintf("the operation was still %s after %s", o.State, r.opts.MaxWait)}
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return o, err
		}
	}
}

// executeFault runs one key through POST /v1/execute with fault on its
// first call and waits for where it settles.
func (r *run) executeFault(ctx context.Context, cr *caseRun, n int) (op, error) {
	key, content := r.key(n, "x"), r.content(n, "a")
	first, err := r.execute(ctx, cr, key, content, true)
	if err != nil {
		return op{}, err
	}
	if first.Status != http.StatusAccepted && first.Status != http.StatusOK {
		return first.Op, nil
	}
	return r.settled(ctx, cr, first.Op.ID)
}

// preset sets the fault of case n's first call.
func (r *run) preset(n int, fault string) { r.faults.set(n, fault) }

func (r *run) executeOnce(ctx context.Context, cr *caseRun) error {
	cr.res.Expected = "200 completed with the provider's reference; the resend 200 Idempotent-Replayed with the same reference, the provider not called again; 1 execution"
	key, content := r.key(1, "x"), r.content(1, "a")
	first, err := r.execute(ctx, cr, key, content, false)
	if err != nil {
		return err
	}
	if first.Status == http.StatusAccepted {
		if first.Op, err = r.settled(ctx, cr, first.Op.ID); err != nil {
			return err
		}
	}
	again, err := r.execute(ctx, cr, key, content, false)
	if err != nil {
		return err
	}
	n := r.observe(cr, again.Op)
	r.expectOnce(cr, n, again.Op.ProviderKey)
	cr.expect(first.Op.State == "completed" && again.Status == http.StatusOK && again.Replayed,
		"the resend was answered %d %s (replayed %v), not the stored completion", again.Status, again.Op.State, again.Replayed)
	cr.matched(again.Op.ref() != "" && again.Op.ref() == first.Op.ref() && again.Op.ref() == r.firstRef(again.Op.ProviderKey))
	return nil
}

func (r *run) executeTimeoutAfter(ctx context.Context, cr *caseRun) error {
	cr.res.Expected = "the lost answer is an unknown outcome: completed by Handoff's lookup or a re-send the card proves safe, else on the desk; never a second execution"
	r.preset(2, sandbox.FaultTimeoutAfter)
	o, err := r.executeFault(ctx, cr, 2)
	if err != nil {
		return err
	}
	n := r.observe(cr, o)
	cr.expect(n <= 1, "%s", r.duplicate(n, o.ProviderKey))
	cr.expect(o.State == "completed" || o.State == "unknown_outcome",
		"after a timeout after executing the operation is %s, not completed or waiting for a person", o.State)
	if o.State == "completed" {
		cr.matched(o.ref() == r.firstRef(o.ProviderKey))
	}
	return nil
}

func (r *run) executeRateLimited(ctx context.Context, cr *caseRun) error {
	retries := r.card.RetryLayer == "handoff" && r.card.retryable("rate_limited")
	cr.res.Expected = "failed_terminal: the card does not let Handoff retry rate_limited; 0 executions"
	if retries {
		cr.res.Expected = "Handoff retries after Retry-After with no further request and completes; 1 execution"
	}
	r.preset(3, sandbox.FaultRateLimited)
	o, err := r.executeFault(ctx, cr, 3)
	if err != nil {
		return err
	}
	n := r.observe(cr, o)
	if retries {
		r.expectOnce(cr, n, o.ProviderKey)
		cr.expect(o.State == "completed", "after a 429 the operation is %s, not completed by Handoff's own retry", o.State)
	} else {
		cr.expect(n == 0 && o.State == "failed_terminal", "after a 429: %s with %d executions", o.State, n)
	}
	return nil
}

func (r *run) executeServerError(ctx context.Context, cr *caseRun) error {
	cr.res.Expected = "a 5xx after the request was sent leaves doubt: re-sent only where the card proves it safe or a lookup proved nothing happened, else on the desk; at most 1 execution"
	r.preset(4, sandbox.FaultServerError)
	o, err := r.executeFault(ctx, cr, 4)
	if err != nil {
		return err
	}
	n := r.observe(cr, o)
	cr.expect(n <= 1, "%s", r.duplicate(n, o.ProviderKey))
	cr.expect(o.State == "completed" || o.State == "unknown_outcome" || o.State == "failed_terminal",
		"after a 503 the operation is %s", o.State)
	return nil
}

func (r *run) executeRefused(ctx context.Context, cr *caseRun) error {
	cr.res.Expected = "409 handed_off with the operation failed_terminal; 0 executions; the resend is the same problem, the provider not called again"
	r.preset(5, sandbox.FaultValidation)
	o, err := r.executeFault(ctx, cr, 5)
	if err != nil {
		return err
	}
	if o.State != "failed_terminal" {
		if o, err = r.settled(ctx, cr, o.ID); err != nil {
			return err
		}
	}
	again, err := r.execute(ctx, cr, r.key(5, "x"), r.content(5, "a"), false)
	if err != nil {
		return err
	}
	n := r.observe(cr, again.Op)
	cr.expect(n == 0 && o.State == "failed_terminal" && again.Status == http.StatusConflict && again.Reason == "handed_off",
		"a 400: %s, resend answered %d %s, %d executions", o.State, again.Status, again.Reason, n)
	return nil
}
