package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/sandbox"
)

// The workload: workflow clients on every replica, racing for the same
// keys, each carrying out its side effect at a sandbox provider.

const (
	typeCharge = "chaos.charge" // the provider does not deduplicate
	typeEmail  = "chaos.email"  // the provider deduplicates by key for a day
	leaseSecs  = 5
)

// workload is what the clients share.
type workload struct {
	c        *cluster
	h        *history
	provider *sandbox.Client
	until    time.Time
	next     atomic.Int64 // keys are handed out three times each, to contend
	paused   atomic.Int64 // pauses past a lease
	fenced   atomic.Int64 // calls of a paused worker refused stale_lease
}

func (w *workload) running() bool { return time.Now().Before(w.until) }

// nextKey is a key and its type; about three clients get each key.
func (w *workload) nextKey() (string, string) {
	n := w.next.Add(1) / 3
	typ := typeCharge
	if n%2 == 1 {
		typ = typeEmail
	}
	return fmt.Sprintf("k%d", n), typ
}

func (w *workload) client(r *replica) *client.Client {
	cl := client.New(r.url(), w.c.token)
	cl.HTTP = w.h.client()
	return cl
}

// execute is the side effect at the provider, with a fault now and then:
// refused before anything happened (rate limited), or the answer lost
// after (or before) the provider acted. A lost answer is an error the
// client settles as unknown_outcome.
func (w *workload) execute(ctx context.Context, providerKey, key string) (client.Result, error) {
	fault := ""
	switch n := rand.IntN(100); {
	case n < 6:
		fault = sandbox.FaultRateLimited
	case n < 10:
		fault = sandbox.FaultTimeoutAfter
	case n < 12:
		fault = sandbox.FaultFailBefore
	}
	r := w.provider.Execute(ctx, providerKey, map[string]any{"key": key}, fault)
	switch {
	case r.Lost():
		return client.Result{}, fmt.Errorf("provider: %v", r.Err)
	case r.Status == http.StatusTooManyRequests:
		return client.Result{}, &client.ProviderError{Class: "rate_limited", Code: "429", Message: r.Message, RetryAfter: r.RetryAfter}
	case r.Status != http.StatusOK:
		return client.Result{}, fmt.Errorf("provider answered %s", r)
	}
	return client.Result{Ref: r.Answer.Ref}, nil
}

// doClient runs client.Do for key after key, as a workflow engine runs a
// step: again after an outage or while a retry is not yet due, not when
// another worker holds the key or a person must decide.
func (w *workload) doClient(id int, r *replica) {
	ctx := asClient(context.Background(), id)
	cl := w.client(r)
	for w.running() {
		key, typ := w.nextKey()
		req := client.Request{Key: key, Type: typ, Content: map[string]any{"key": key},
			Worker: fmt.Sprintf("do%d", id), LeaseSeconds: leaseSecs}
		fn := func(ctx context.Context, claim client.Claim) (client.Result, error) {
			return w.execute(ctx, claim.ProviderKey, key)
		}
		for try := 0; try < 6 && w.running(); try++ {
			_, err := cl.Do(ctx, req, fn)
			var pe *client.ProviderError
			if err == nil || errors.As(err, &pe) {
				break // settled, as the card judged it
			}
			var p *client.Problem
			if errors.As(err, &p) && p.Code == "not_claimable" && p.Reason != "retry_later" {
				break
			}
			time.Sleep(time.Duration(50+rand.IntN(250)) * time.Millisecond)
		}
	}
}

// rawClient runs the lifecycle call by call: register, claim, begin, the
// provider, settle, and a read of what it settled.
func (w *workload) rawClient(id int, r *replica) {
	ctx := asClient(context.Background(), id)
	cl := w.client(r)
	worker := fmt.Sprintf("raw%d", id)
	for w.running() {
		key, typ := w.nextKey()
		var op client.Operation
		if !retry(func() error {
			return cl.Call(ctx, "POST", "/v1/operations", map[string]any{"key": key, "type": typ,
				"content": map[string]any{"key": key}}, &op)
		}) {
			continue
		}
		path := "/v1/operations/" + url.PathEscape(op.ID)
		var claim client.Claim
		if !retry(func() error {
			return cl.Call(ctx, "POST", path+"/claim", map[string]any{"worker": worker, "lease_seconds": leaseSecs}, &claim)
		}) {
			continue
		}
		tok := claim.Lease.Token
		if !retry(func() error { return cl.Call(ctx, "POST", path+"/begin", map[string]any{"lease_token": tok}, nil) }) {
			continue
		}
		res, err := w.execute(ctx, claim.ProviderKey, key)
		settle := settleBody(tok, res, err)
		retry(func() error { return cl.Call(ctx, "POST", path+"/settle", settle, nil) })
		retry(func() error { _, err := cl.Get(ctx, op.ID); return err })
	}
}

// settleBody is the settle a worker sends for what the provider said.
func settleBody(token int64, res client.Result, err error) map[string]any {
	var pe *client.ProviderError
	switch {
	case errors.As(err, &pe):
		return map[string]any{"lease_token": token, "outcome": "failed_retryable",
			"error": map[string]any{"class": pe.Class, "code": pe.Code, "message": pe.Message}}
	case err != nil:
		return map[string]any{"lease_token": token, "outcome": "unknown_outcome",
			"error": map[string]any{"class": "timeout", "message": err.Error()}}
	}
	return map[string]any{"lease_token": token, "outcome": "completed", "result": res}
}

// retry sends a call again while its answer is lost or the database away,
// a few times; true when it was answered 2xx.
func retry(f func() error) bool {
	for try := 0; try < 8; try++ {
		err := f()
		if err == nil {
			return true
		}
		var p *client.Problem
		if errors.As(err, &p) && p.Status != http.StatusServiceUnavailable {
			return false
		}
		time.Sleep(time.Duration(50+rand.IntN(150)) * time.Millisecond)
	}
	return false
}

// pausingWorker claims a key with a one-second lease on one replica and
// sleeps past it — before begin, or (every other time) after begin and the
// provider call, like a worker stopped by a long GC pause or SIGSTOP.
// Meanwhile a second worker claims the key on another replica. Then the
// first wakes up on a third replica and carries on as if it still held
// the lease: begin, the provider, settle. The fence must refuse it.
func (w *workload) pausingWorker(id int) {
	ctx := asClient(context.Background(), id)
	freshCtx := asClient(context.Background(), id+2) // the second worker, for the history
	rs := w.c.replicas
	for round := 0; w.running(); round++ {
		a, b, c := w.client(rs[round%len(rs)]), w.client(rs[(round+1)%len(rs)]), w.client(rs[(round+2)%len(rs)])
		key, typ := fmt.Sprintf("p%d-%d", id, round), typeCharge
		afterBegin := round%2 == 1
		if afterBegin {
			typ = typeEmail // so the lapsed lease is retried, and the second worker gets it
		}
		var reg struct {
			client.Operation
			Claim *client.Claim `json:"claim"`
		}
		if !retry(func() error {
			return a.Call(ctx, "POST", "/v1/operations", map[string]any{"key": key, "type": typ,
				"content": map[string]any{"key": key}, "claim": map[string]any{"worker": "paused", "lease_seconds": 1}}, &reg)
		}) || reg.Claim == nil {
			continue
		}
		path := "/v1/operations/" + url.PathEscape(reg.ID)
		old := reg.Claim.Lease.Token
		var settle map[string]any // the paused worker's, once it has called the provider
		if afterBegin {
			if !retry(func() error { return a.Call(ctx, "POST", path+"/begin", map[string]any{"lease_token": old}, nil) }) {
				continue
			}
			res, err := w.execute(ctx, reg.Claim.ProviderKey, key)
			settle = settleBody(old, res, err)
		}
		time.Sleep(1300 * time.Millisecond) // past the lease
		w.paused.Add(1)

		var fresh client.Claim
		for until := time.Now().Add(4 * time.Second); fresh.Lease.Token == 0 && time.Now().Before(until); time.Sleep(100 * time.Millisecond) {
			_ = b.Call(freshCtx, "POST", path+"/claim", map[string]any{"worker": "fresh", "lease_seconds": leaseSecs}, &fresh)
		}

		// The paused worker wakes up.
		if settle == nil {
			err := c.Call(ctx, "POST", path+"/begin", map[string]any{"lease_token": old}, nil)
			if client.IsCode(err, "stale_lease") {
				w.fenced.Add(1)
			} else if err == nil { // it believes it holds the lease
				res, err := w.execute(ctx, reg.Claim.ProviderKey, key)
				settle = settleBody(old, res, err)
			}
		}
		if settle != nil {
			if err := c.Call(ctx, "POST", path+"/settle", settle, nil); client.IsCode(err, "stale_lease") {
				w.fenced.Add(1)
			}
		}

		if tok := fresh.Lease.Token; tok != 0 {
			if retry(func() error { return b.Call(freshCtx, "POST", path+"/begin", map[string]any{"lease_token": tok}, nil) }) {
				res, err := w.execute(freshCtx, fresh.ProviderKey, key)
				body := settleBody(tok, res, err)
				retry(func() error { return b.Call(freshCtx, "POST", path+"/settle", body, nil) })
			}
		}
	}
}
