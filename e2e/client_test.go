package e2e

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/client"
)

// TestClientDo runs the Go client's whole protocol against the real server:
// the provider is called at most once per key, whatever happens.
func TestClientDo(t *testing.T) {
	s := startServer(t)
	c := client.New(s.URL, s.Token)
	ctx := context.Background()
	calls := map[string]int{}
	provider := func(key string, err error) func(context.Context, client.Claim) (client.Result, error) {
		return func(_ context.Context, claim client.Claim) (client.Result, error) {
			calls[key]++
			var content map[string]any
			if e := claim.ContentInto(&content); e != nil || content["title"] != "hi" || claim.ProviderKey == "" {
				t.Errorf("claim without the snapshot or provider key: %+v", claim)
			}
			return client.Result{Ref: "crm_" + key}, err
		}
	}
	req := func(key string) client.Request {
		// Each key its own content: one content under several open keys is a twin, held for a person.
		return client.Request{Key: key, Type: "crm.task.create", Content: map[string]any{"title": "hi", "for": key}}
	}

	op, err := c.Do(ctx, req("ok"), provider("ok", nil))
	if err != nil || op.State != "completed" || op.Result.Ref != "crm_ok" {
		t.Fatalf("first run: %+v %v", op, err)
	}
	op, err = c.Do(ctx, req("ok"), provider("ok", nil))
	if err != nil || op.State != "completed" || op.Result.Ref != "crm_ok" || calls["ok"] != 1 {
		t.Fatalf("a rerun must return the stored result without calling the provider: %+v %v calls=%d", op, err, calls["ok"])
	}

	lost := errors.New("read timeout")
	op, err = c.Do(ctx, req("lost"), provider("lost", lost))
	if !errors.Is(err, lost) || op.State != "unknown_outcome" {
		t.Fatalf("a timeout after begin must be unknown_outcome: %+v %v", op, err)
	}
	_, err = c.Do(ctx, req("lost"), provider("lost", nil))
	if !client.IsCode(err, "not_claimable") || calls["lost"] != 1 {
		t.Fatalf("an unknown outcome must not be retried: %v calls=%d", err, calls["lost"])
	}

	op, err = c.Do(ctx, req("bad"), provider("bad", &client.ProviderError{Class: "validation", Message: "owner missing"}))
	if err == nil || op.State != "failed_terminal" {
		t.Fatalf("a validation error is terminal by the card: %+v %v", op, err)
	}

	// Two calls by default: the claim begins at once. Three with SeparateBegin.
	for _, tc := range []struct {
		key      string
		separate bool
		want     string
	}{{"two", false, "registered_and_began settled"}, {"three", true, "registered_and_claimed began settled"}} {
		r := req(tc.key)
		r.SeparateBegin = tc.separate
		op, err := c.Do(ctx, r, provider(tc.key, nil))
		if err != nil || op.State != "completed" {
			t.Fatalf("%s: %+v %v", tc.key, op, err)
		}
		var tl struct {
			Items []struct {
				Action string `json:"action"`
			} `json:"items"`
		}
		if err := c.Call(ctx, http.MethodGet, "/v1/operations/"+op.ID+"/timeline", nil, &tl); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range tl.Items {
			got = append(got, e.Action)
		}
		if strings.Join(got, " ") != tc.want {
			t.Fatalf("%s: timeline %v, want %s", tc.key, got, tc.want)
		}
	}
}

// TestClientDo_RidesOutOutage: a provider call that succeeded just as the
// server lost its database for 5 seconds ends completed. Begin, heartbeat
// and settle are retried with the same lease token while the lease lasts;
// the outage is a proxy answering what the server answers then — 503 with
// Retry-After — or dropping the connection.
func TestClientDo_RidesOutOutage(t *testing.T) {
	s := startServer(t)
	target, _ := url.Parse(s.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	var downUntil atomic.Int64
	var refused atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if time.Now().UnixNano() < downUntil.Load() {
			if refused.Add(1)%2 == 0 {
				w.Header().Set("Retry-After", "1")
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = io.WriteString(w, `{"type":"/problems/unavailable","title":"Service unavailable","status":503,"code":"unavailable"}`)
				return
			}
			if hj, ok := w.(http.Hijacker); ok { // the connection is lost
				conn, _, err := hj.Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()

	c := client.New(proxy.URL, s.Token)
	calls := 0
	op, err := c.Do(context.Background(), client.Request{Key: "outage", Type: "crm.task.create", Content: map[string]any{"title": "hi"},
		LeaseSeconds: 30}, func(context.Context, client.Claim) (client.Result, error) {
		calls++
		downUntil.Store(time.Now().Add(5 * time.Second).UnixNano())
		return client.Result{Ref: "crm_outage"}, nil
	})
	if err != nil || op.State != "completed" || op.Result == nil || op.Result.Ref != "crm_outage" {
		t.Fatalf("a provider call that succeeded during an outage must end completed: %+v %v", op, err)
	}
	if refused.Load() == 0 {
		t.Fatal("the outage never refused a call")
	}
	got := s.do(t, "GET", "/v1/operations?key=outage", nil)
	if items, _ := got.Body["items"].([]any); len(items) != 1 || str(items[0].(map[string]any), "state") != "completed" || calls != 1 {
		t.Fatalf("server says %s; provider called %d times", got.Raw, calls)
	}
}
