package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Request names the one business intent to run: the stable key (never
// changed on retry), the operation type and the content.
type Request struct {
	Key           string
	Type          string
	Content       any
	EventID       string
	CorrelationID string
	Source        string // what produced the request, shown on the operation
	Worker        string
	LeaseSeconds  int

	// CausedBy is the key of the operation whose side effect triggered
	// this one; Handoff refuses to run a self-trigger loop.
	CausedBy string

	// SeparateBegin sends begin as a call of its own, after the claim and
	// just before fn: three calls instead of two. By default the claim
	// begins at once (claim.begin), since fn is the provider call and
	// nothing runs between them; a worker that did work of its own between
	// claim and call would want the separate begin, so that dying during
	// that work leaves the operation to another worker rather than unknown.
	SeparateBegin bool
}

// ProviderError is how fn reports what the provider said, so the server can
// apply the type's retry card: Class is one of transient, rate_limited,
// timeout, validation, auth, permission, not_found, conflict, config, unknown.
type ProviderError struct {
	Class      string
	Code       string
	Message    string
	RetryAfter time.Duration
}

func (e *ProviderError) Error() string { return fmt.Sprintf("%s %s: %s", e.Class, e.Code, e.Message) }

// ErrNotClaimable is returned (wrapped in a *Problem) when the operation is
// not for this worker now: completed (Do then returns the stored result
// without error), in progress elsewhere, waiting for a retry or a person.
var ErrNotClaimable = errors.New("not claimable")

// ErrNotSent is what fn returns, wrapped, when it stopped before it could
// have called the provider — its own checks of its arguments failed — so
// nothing was sent: Do settles the attempt failed (class config, code
// not_sent), releasing the lease at once instead of leaving it to lapse into
// an unknown outcome, and the card decides whether it is retried.
var ErrNotSent = errors.New("the provider was not called")

type registerAnswer struct {
	Operation
	Claim        *Claim `json:"claim"`
	ClaimRefused *struct {
		Reason string `json:"reason"`
		Detail string `json:"detail"`
	} `json:"claim_refused"`
}

// Do runs the protocol around fn, the one call to the provider: register
// the key and claim it, beginning in the same call (from here a lost worker
// means "unknown", never a silent retry); if it already completed, return
// the stored result without calling fn; otherwise call fn with the approved
// content and the provider key while heartbeating the lease, and settle
// what fn returned — two calls (three with Request.SeparateBegin). The
// answer is the operation as the server settled it — which, after the retry
// card, may differ from what fn reported — with Replayed set when the key
// had completed before and fn was not called.
//
// A Result without a Ref is settled completed with the ref DerivedRef
// gives: fn returned, so the provider's answer is kept rather than left to a
// person.
func (c *Client) Do(ctx context.Context, r Request, fn func(ctx context.Context, claim Claim) (Result, error)) (Operation, error) {
	if fn == nil {
		return Operation{}, errors.New("handoff: Do needs fn, the provider call")
	}
	lease, worker := leaseAndWorker(r)
	body := map[string]any{"key": r.Key, "type": r.Type, "content": r.Content,
		"claim": map[string]any{"worker": worker, "lease_seconds": lease, "begin": !r.SeparateBegin}}
	if r.EventID != "" {
		body["event_id"] = r.EventID
	}
	if r.CorrelationID != "" {
		body["correlation_id"] = r.CorrelationID
	}
	if r.CausedBy != "" {
		body["caused_by"] = r.CausedBy
	}
	if r.Source != "" {
		body["source"] = r.Source
	}
	var reg registerAnswer
	claimedAt := time.Now() // the lease runs from no later than this
	if _, err := c.call(ctx, http.MethodPost, "/v1/operations", body, &reg); err != nil {
		return Operation{}, err
	}
	if reg.Claim == nil {
		if reg.State == "completed" {
			reg.Operation.Replayed = true
			return reg.Operation, nil
		}
		reason := ""
		if reg.ClaimRefused != nil {
			reason = reg.ClaimRefused.Reason
		}
		return reg.Operation, &Problem{Status: http.StatusConflict, Code: "not_claimable", Reason: reason,
			Detail: ErrNotClaimable.Error(), Operation: &reg.Operation}
	}
	return c.run(ctx, reg.Operation, *reg.Claim, claimedAt, lease, fn)
}

// Resume claims the known operation id — one whose key the caller cannot
// register again, e.g. after a person approved its snapshot — and runs fn on
// the claimed snapshot like Do; r gives only the worker and the lease.
func (c *Client) Resume(ctx context.Context, id string, r Request, fn func(ctx context.Context, claim Claim) (Result, error)) (Operation, error) {
	if fn == nil {
		return Operation{}, errors.New("handoff: Resume needs fn, the provider call")
	}
	lease, worker := leaseAndWorker(r)
	var answer struct {
		Operation Operation `json:"operation"`
		Claim
	}
	claimedAt := time.Now()
	if _, err := c.call(ctx, http.MethodPost, "/v1/operations/"+url.PathEscape(id)+"/claim",
		map[string]any{"worker": worker, "lease_seconds": lease, "begin": !r.SeparateBegin}, &answer); err != nil {
		return Operation{}, err
	}
	return c.run(ctx, answer.Operation, answer.Claim, claimedAt, lease, fn)
}

func leaseAndWorker(r Request) (int, string) {
	lease, worker := r.LeaseSeconds, r.Worker
	if lease == 0 {
		lease = 30
	}
	if worker == "" {
		worker = "go-client"
	}
	return lease, worker
}

// run is the protocol after a claim: begin unless the claim began at once,
// fn under heartbeats, settle.
func (c *Client) run(ctx context.Context, op Operation, claim Claim, claimedAt time.Time, lease int, fn func(ctx context.Context, claim Claim) (Result, error)) (Operation, error) {
	path := "/v1/operations/" + url.PathEscape(op.ID)
	held := &leaseClock{}
	held.extend(claimedAt, lease)
	if op.State != "action_pending" { // a claim without begin (Request.SeparateBegin)
		if err := c.callLeased(ctx, held, path+"/begin", map[string]any{"lease_token": claim.Lease.Token}, nil); err != nil {
			return op, err // nothing was sent; the lease will lapse and another worker may claim
		}
	}
	result, fnErr := c.withHeartbeat(ctx, held, path, claim, lease, fn)
	settle := map[string]any{"lease_token": claim.Lease.Token}
	var pe *ProviderError
	switch {
	case fnErr == nil:
		if result.Ref == "" {
			ref, err := DerivedRef(result)
			if err != nil { // Data is not JSON: the server would refuse it too
				settle["outcome"] = "unknown_outcome"
				settle["error"] = map[string]any{"class": "unknown", "message": "fn returned a result whose data is not JSON: " + err.Error()}
				break
			}
			result.Ref = ref
		}
		settle["outcome"], settle["result"] = "completed", result
	case errors.Is(fnErr, ErrNotSent):
		settle["outcome"] = "failed_retryable"
		settle["error"] = map[string]any{"class": "config", "code": "not_sent", "message": fnErr.Error()}
	case errors.As(fnErr, &pe):
		settle["outcome"] = "failed_retryable"
		settle["error"] = map[string]any{"class": pe.Class, "code": pe.Code, "message": pe.Message,
			"retry_after_seconds": int(pe.RetryAfter.Seconds())}
	default:
		settle["outcome"] = "unknown_outcome"
		settle["error"] = map[string]any{"class": "unknown", "message": fnErr.Error()}
	}
	var settled Operation
	// Settle even if ctx was cancelled while fn ran: the server must hear it.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	// A retry of a settle whose answer was lost is the same settle: the
	// server answers it as it did (Idempotent-Replayed), so a stale_lease
	// here means the lease was lost, never that the settle was kept.
	if err := c.callLeased(sctx, held, path+"/settle", settle, &settled); err != nil {
		return op, err
	}
	return settled, fnErr
}

// leaseClock is the worker's own, cautious view of when its lease ends:
// measured from before the request that got or extended it.
type leaseClock struct {
	mu    sync.Mutex
	until time.Time
}

func (l *leaseClock) extend(sentAt time.Time, seconds int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t := sentAt.Add(time.Duration(seconds) * time.Second); t.After(l.until) {
		l.until = t
	}
}

func (l *leaseClock) left() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Until(l.until)
}

// Retries of begin, heartbeat and settle: these calls are idempotent for
// the lease holder, so after a 503 or a lost connection they are sent again
// with the same lease token for as long as the lease lasts.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 2 * time.Second
)

// callLeased is a POST that rides out a short outage: on 503 unavailable or
// a connection error it waits — the server's Retry-After when it gave one,
// else an exponential backoff with full jitter capped at retryMax — and
// tries again, while the lease is still valid and ctx lives.
func (c *Client) callLeased(ctx context.Context, held *leaseClock, path string, in, out any) error {
	backoff := retryFirst
	for {
		resp, err := c.call(ctx, http.MethodPost, path, in, out)
		if err == nil || !retryable(ctx, err) {
			return err
		}
		wait := time.Duration(rand.Int64N(int64(backoff))) + time.Millisecond
		backoff = min(2*backoff, retryMax)
		if resp != nil {
			if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s >= 0 {
				wait = time.Duration(s) * time.Second
			}
		}
		wait = min(wait, retryMax+time.Second)
		if held.left() <= wait {
			return err // the lease ends first: a retry could only be refused
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

// retryable: the server was unavailable, or the request or its answer was
// lost on the way; not the caller's own cancellation.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var p *Problem
	if errors.As(err, &p) {
		return p.Status == http.StatusServiceUnavailable || p.Status == http.StatusBadGateway || p.Status == http.StatusGatewayTimeout
	}
	var syntax *json.SyntaxError
	return !errors.As(err, &syntax) // a transport error: connection refused, reset, EOF, timeout
}

// withHeartbeat runs fn while extending the lease every third of its length.
func (c *Client) withHeartbeat(ctx context.Context, held *leaseClock, path string, claim Claim, lease int, fn func(context.Context, Claim) (Result, error)) (Result, error) {
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(time.Duration(lease) * time.Second / 3)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				sent := time.Now()
				if c.callLeased(ctx, held, path+"/heartbeat",
					map[string]any{"lease_token": claim.Lease.Token, "lease_seconds": lease}, nil) == nil {
					held.extend(sent, lease)
				}
			}
		}
	}()
	return fn(ctx, claim)
}

// ContentInto decodes the claimed snapshot into v.
func (c Claim) ContentInto(v any) error { return json.Unmarshal(c.Content, v) }
