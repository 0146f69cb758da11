package sandbox_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/sandbox"
)

func start(t *testing.T, cfg sandbox.Config) (*sandbox.Sandbox, *sandbox.Client) {
	t.Helper()
	sb, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(srv.Close)
	return sb, sandbox.NewClient(srv.URL, 2*time.Second)
}

func TestSandbox_Idempotency(t *testing.T) {
	ctx := context.Background()
	t.Run("none executes every request", func(t *testing.T) {
		sb, c := start(t, sandbox.Config{Idempotency: sandbox.IdempotencyNone})
		a := c.Execute(ctx, "hk_1", map[string]any{"to": "a"}, "")
		b := c.Execute(ctx, "hk_1", map[string]any{"to": "a"}, "")
		if a.Status != 200 || b.Status != 200 || b.Answer.Replayed || a.Answer.Ref == b.Answer.Ref {
			t.Fatalf("want two executions, got %s then %s", a, b)
		}
		if n := sb.Executions("hk_1"); n != 2 {
			t.Fatalf("executions = %d, want 2", n)
		}
	})
	t.Run("key replays inside retention and executes again after", func(t *testing.T) {
		sb, c := start(t, sandbox.Config{Idempotency: sandbox.IdempotencyKey, Retention: 24 * time.Hour})
		a := c.Execute(ctx, "hk_1", map[string]any{"to": "a"}, "")
		b := c.Execute(ctx, "hk_1", map[string]any{"to": "other"}, "")
		if !b.Answer.Replayed || b.Answer.Ref != a.Answer.Ref || sb.Executions("hk_1") != 1 {
			t.Fatalf("inside retention want the stored answer, got %s then %s", a, b)
		}
		if other := c.Execute(ctx, "hk_2", nil, ""); other.Answer.Replayed || sb.Executions("hk_2") != 1 {
			t.Fatalf("another key is another execution, got %s", other)
		}
		sb.Advance(24*time.Hour + time.Second)
		d := c.Execute(ctx, "hk_1", map[string]any{"to": "a"}, "")
		if d.Answer.Replayed || d.Answer.Ref == a.Answer.Ref || sb.Executions("hk_1") != 2 {
			t.Fatalf("past retention the key is forgotten, got %s", d)
		}
	})
	t.Run("key_and_params refuses changed params under one key", func(t *testing.T) {
		sb, c := start(t, sandbox.Config{Idempotency: sandbox.IdempotencyKeyAndParams, Retention: time.Hour})
		a := c.Execute(ctx, "hk_1", map[string]any{"amount": 5}, "")
		same := c.Execute(ctx, "hk_1", map[string]any{"amount": 5}, "")
		changed := c.Execute(ctx, "hk_1", map[string]any{"amount": 6}, "")
		if !same.Answer.Replayed || same.Answer.Ref != a.Answer.Ref {
			t.Fatalf("same params want the stored answer, got %s", same)
		}
		if changed.Status != http.StatusUnprocessableEntity {
			t.Fatalf("changed params want 422, got %s", changed)
		}
		if n := sb.Executions("hk_1"); n != 1 {
			t.Fatalf("executions = %d, want 1", n)
		}
	})
	t.Run("concurrent requests under one key execute once", func(t *testing.T) {
		sb, c := start(t, sandbox.Config{Idempotency: sandbox.IdempotencyKey})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { c.Execute(ctx, "hk_c", nil, "") })
		}
		wg.Wait()
		if n := sb.Executions("hk_c"); n != 1 {
			t.Fatalf("executions = %d, want 1", n)
		}
	})
}

func TestSandbox_Faults(t *testing.T) {
	ctx := context.Background()
	t.Run("fail_before drops the connection and executes nothing", func(t *testing.T) {
		sb, c := start(t, sandbox.Config{})
		r := c.Execute(ctx, "hk_1", nil, sandbox.FaultFailBefore)
		if !r.Lost() || sb.Executions("hk_1") != 0 {
			t.Fatalf("want a lost answer and no execution, got %s and %d", r, sb.Executions("hk_1"))
		}
	})
	t.Run("timeout_after executes and the answer is lost", func(t *testing.T) {
		sb, err := sandbox.New(sandbox.Config{Hold: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(sb.Handler())
		defer srv.Close()
		c := sandbox.NewClient(srv.URL, 100*time.Millisecond)
		r := c.Execute(ctx, "hk_1", nil, sandbox.FaultTimeoutAfter)
		if !r.TimedOut() {
			t.Fatalf("want a timeout, got %s", r)
		}
		if n := sb.Executions("hk_1"); n != 1 {
			t.Fatalf("executions = %d, want 1: the provider acted", n)
		}
	})
	t.Run("timeout_after with a patient caller still loses the answer", func(t *testing.T) {
		sb, c := start(t, sandbox.Config{Hold: time.Millisecond})
		r := c.Execute(ctx, "hk_1", nil, sandbox.FaultTimeoutAfter)
		if !r.Lost() || sb.Executions("hk_1") != 1 {
			t.Fatalf("want a lost answer after one execution, got %s", r)
		}
	})
	t.Run("rate_limited answers 429 with Retry-After and executes nothing", func(t *testing.T) {
		sb, c := start(t, sandbox.Config{RetryAfter: 3 * time.Second})
		r := c.Execute(ctx, "hk_1", nil, sandbox.FaultRateLimited)
		if r.Status != http.StatusTooManyRequests || r.RetryAfter != 3*time.Second || sb.Executions("hk_1") != 0 {
			t.Fatalf("want 429 Retry-After 3s and no execution, got %s", r)
		}
	})
	t.Run("server_error answers 503 and executes nothing", func(t *testing.T) {
		sb, c := start(t, sandbox.Config{})
		r := c.Execute(ctx, "hk_1", nil, sandbox.FaultServerError)
		if r.Status != http.StatusServiceUnavailable || sb.Executions("hk_1") != 0 {
			t.Fatalf("want 503 and no execution, got %s", r)
		}
	})
	t.Run("slow answers after the delay, or times out a hasty caller", func(t *testing.T) {
		sb, err := sandbox.New(sandbox.Config{Slow: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(sb.Handler())
		defer srv.Close()
		patient := sandbox.NewClient(srv.URL, 5*time.Second).Execute(ctx, "hk_1", nil, sandbox.FaultSlow)
		if patient.Status != 200 || patient.Answer.Executions != 1 {
			t.Fatalf("a patient caller gets the answer, got %s", patient)
		}
		hasty := sandbox.NewClient(srv.URL, 50*time.Millisecond).Execute(ctx, "hk_2", nil, sandbox.FaultSlow)
		if !hasty.TimedOut() {
			t.Fatalf("a hasty caller times out, got %s", hasty)
		}
	})
	t.Run("an unknown fault is refused", func(t *testing.T) {
		sb, c := start(t, sandbox.Config{})
		if r := c.Execute(ctx, "hk_1", nil, "meteor"); r.Status != http.StatusBadRequest || sb.Executions("hk_1") != 0 {
			t.Fatalf("want 400, got %s", r)
		}
	})
}

func TestSandbox_Lookup(t *testing.T) {
	ctx := context.Background()
	t.Run("authoritative finds every execution, even when asked to miss", func(t *testing.T) {
		_, c := start(t, sandbox.Config{Lookup: sandbox.LookupAuthoritative})
		ex := c.Execute(ctx, "hk_1", nil, "")
		a, err := c.Lookup(ctx, "hk_1", sandbox.FaultLookupMiss)
		if err != nil || !a.Found || a.Ref != ex.Answer.Ref || !a.Authoritative {
			t.Fatalf("want found %s, authoritative; got %+v %v", ex.Answer.Ref, a, err)
		}
		none, err := c.Lookup(ctx, "hk_never", "")
		if err != nil || none.Found || !none.Authoritative {
			t.Fatalf("want an authoritative not found, got %+v %v", none, err)
		}
	})
	t.Run("unsure may miss an execution", func(t *testing.T) {
		_, c := start(t, sandbox.Config{Lookup: sandbox.LookupUnsure})
		c.Execute(ctx, "hk_1", nil, "")
		found, _ := c.Lookup(ctx, "hk_1", "")
		missed, err := c.Lookup(ctx, "hk_1", sandbox.FaultLookupMiss)
		if err != nil || !found.Found || missed.Found || missed.Authoritative {
			t.Fatalf("want found, then a non-authoritative miss; got %+v %+v %v", found, missed, err)
		}
	})
	t.Run("none has no lookup", func(t *testing.T) {
		_, c := start(t, sandbox.Config{})
		if _, err := c.Lookup(ctx, "hk_1", ""); err == nil {
			t.Fatal("want an error: this provider offers no lookup")
		}
	})
}

func TestSandbox_Wire(t *testing.T) {
	sb, err := sandbox.New(sandbox.Config{Idempotency: sandbox.IdempotencyKey, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb.Handler())
	defer srv.Close()
	c := sandbox.NewClient(srv.URL, time.Second)
	ctx := context.Background()
	c.Execute(ctx, "hk_1", map[string]any{"n": 1}, "")
	n, err := c.Count(ctx, "hk_1")
	if err != nil || n.Executions != 1 || len(n.History) != 1 || string(n.History[0].Params) != `{"n":1}` {
		t.Fatalf("count: %+v %v", n, err)
	}
	resp, err := http.Post(srv.URL+"/clock", "application/json", bytes.NewReader([]byte(`{"advance":"2h"}`)))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("clock: %v %v", resp, err)
	}
	resp.Body.Close()
	if r := c.Execute(ctx, "hk_1", map[string]any{"n": 1}, ""); r.Answer.Replayed {
		t.Fatalf("after the clock moved past retention the key is forgotten, got %s", r)
	}
	for _, bad := range []string{`{}`, `{"advance":"-1h"}`, `nope`} {
		resp, err := http.Post(srv.URL+"/clock", "application/json", bytes.NewReader([]byte(bad)))
		if err != nil || resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("clock %s: want 400, got %v %v", bad, resp, err)
		}
		resp.Body.Close()
	}
	resp, err = http.Post(srv.URL+"/execute", "application/json", bytes.NewReader([]byte(`{"params":{}}`)))
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("execute without key: want 400, got %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err := sandbox.New(sandbox.Config{Idempotency: "maybe"}); err == nil {
		t.Fatal("an unknown idempotency mode must be refused")
	}
	if _, err := sandbox.New(sandbox.Config{Lookup: "sometimes"}); err == nil {
		t.Fatal("an unknown lookup mode must be refused")
	}
}
