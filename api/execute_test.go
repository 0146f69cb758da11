package api_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/execute"
	"github.com/opshandoff/handoff/store/storetest"
)

// executeRig is the API with an executor whose provider answers after
// hold, and a workflow token "wf".
type executeRig struct {
	srv   *httptest.Server
	calls atomic.Int64
	hold  atomic.Int64
}

func newExecuteRig(t *testing.T) *executeRig {
	t.Helper()
	r := &executeRig{}
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		n := r.calls.Add(1)
		time.Sleep(time.Duration(r.hold.Load()))
		_, _ = w.Write([]byte(`{"id": "ref_` + string(rune('0'+n)) + `"}`))
	}))
	t.Cleanup(provider.Close)
	a := &domain.ExecuteAdapter{Method: "POST", URL: provider.URL + "/x", Body: domain.ExecuteBodyContent,
		Timeout: 5 * time.Second, CompletedStatus: []int{200}, CompletedRef: "/id"}
	card := domain.Card{Name: "charge", Provider: "p", ProviderIdempotency: domain.IdempotencyNone, Lookup: domain.LookupNone,
		Retry: domain.RetryPolicy{MaxAttempts: 3, Backoff: time.Second, BackoffMax: time.Second}, Lease: 30 * time.Second,
		RetryLayer: domain.RetryByHandoff, ExecuteAdapter: a, TwinsAllowed: true,
		ExecuteEndpoint: &domain.ExecuteEndpoint{Wait: 200 * time.Millisecond}}
	signed := card
	signed.Name = "signed"
	signed.ExecuteEndpoint = &domain.ExecuteEndpoint{KeyPointer: "/id", ContentPointer: "/properties",
		Signature: &domain.ExecuteSignature{Header: "X-Sig", SecretEnv: "SIG_SECRET", Namespace: "shop"}}
	noAdapter := card
	noAdapter.Name, noAdapter.ExecuteAdapter, noAdapter.ExecuteEndpoint = "plain", nil, nil
	ledger := domain.NewLedger(storetest.New(t), domain.Cards{card.Name: card, signed.Name: signed, noAdapter.Name: noAdapter})
	x := &execute.Executor{Workflow: ledger.Workflow, Caller: execute.NewCaller(true, nil), Worker: "replica-1"}
	t.Cleanup(x.Wait)
	e, err := api.New(api.Config{Ledger: ledger, Executor: x, Logger: slog.New(slog.DiscardHandler),
		Auth:   people{"wf": {Kind: domain.ActorWorkflow, Name: "wf", Namespace: "ns"}},
		Getenv: func(k string) string { return map[string]string{"SIG_SECRET": "s3cret"}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewServer(e)
	t.Cleanup(r.srv.Close)
	return r
}

func (r *executeRig) post(t *testing.T, typ, body string, hdr ...string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", r.srv.URL+"/v1/execute/"+typ, strings.NewReader(body))
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp, m
}

// TestExecuteRoute_Answers: 202 for an async request and one still running
// after the wait, 409 in_progress with Retry-After for a second request
// meanwhile, 200 replayed after, and the provider called once.
func TestExecuteRoute_Answers(t *testing.T) {
	r := newExecuteRig(t)
	r.hold.Store(int64(600 * time.Millisecond))
	resp, op := r.post(t, "charge", `{"n": 1}`, "Authorization", "Bearer wf", "Idempotency-Key", "k1", "Prefer", "respond-async")
	if resp.StatusCode != 202 || resp.Header.Get("Location") != "/v1/operations/"+op["id"].(string) ||
		resp.Header.Get("Preference-Applied") != "respond-async" {
		t.Fatalf("async: %d %v %v", resp.StatusCode, resp.Header, op)
	}
	resp, p := r.post(t, "charge", `{"n": 1}`, "Authorization", "Bearer wf", "Idempotency-Key", "k1")
	if resp.StatusCode != 409 || p["reason"] != "in_progress" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("while running: %d %v %v", resp.StatusCode, resp.Header, p)
	}
	// A synchronous request whose call outlasts the card's wait: 202.
	resp, _ = r.post(t, "charge", `{"n": 2}`, "Authorization", "Bearer wf", "Idempotency-Key", "k2")
	if resp.StatusCode != 202 || resp.Header.Get("Preference-Applied") != "" {
		t.Fatalf("sync past the wait: %d %v", resp.StatusCode, resp.Header)
	}
	time.Sleep(time.Second)
	resp, done := r.post(t, "charge", `{"n": 1}`, "Authorization", "Bearer wf", "Idempotency-Key", "k1")
	if resp.StatusCode != 200 || resp.Header.Get("Idempotent-Replayed") != "true" || done["state"] != "completed" {
		t.Fatalf("after: %d %v %v", resp.StatusCode, resp.Header, done)
	}
	if r.calls.Load() != 2 {
		t.Fatalf("the provider was called %d times for two keys", r.calls.Load())
	}
	resp, p = r.post(t, "charge", `{"n": 9}`, "Authorization", "Bearer wf", "Idempotency-Key", "k1")
	if resp.StatusCode != 422 || p["code"] != "fingerprint_mismatch" {
		t.Fatalf("other content: %d %v", resp.StatusCode, p)
	}
}

// TestExecuteRoute_Refusals: no token, an unknown type, a type without an
// adapter, no key, a wrong signature: each a problem, nothing called.
func TestExecuteRoute_Refusals(t *testing.T) {
	r := newExecuteRig(t)
	body := `{"id": "run-1", "properties": {"tag": "vip"}}`
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte(body))
	good := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, tc := range []struct {
		typ, body string
		hdr       []string
		status    int
		code      string
	}{
		{"charge", `{}`, []string{"Idempotency-Key", "k"}, 401, "unauthenticated"},
		{"nope", `{}`, nil, 401, "unauthenticated"},
		{"nope", `{}`, []string{"Authorization", "Bearer wf", "Idempotency-Key", "k"}, 404, "not_found"},
		{"plain", `{}`, []string{"Authorization", "Bearer wf", "Idempotency-Key", "k"}, 404, "not_found"},
		{"charge", `{}`, []string{"Authorization", "Bearer wf"}, 400, "validation_failed"},
		{"charge", `[1`, []string{"Authorization", "Bearer wf", "Idempotency-Key", "k"}, 400, "invalid_json"},
		{"charge", `[1]`, []string{"Authorization", "Bearer wf", "Idempotency-Key", "k"}, 400, "validation_failed"},
		{"signed", body, []string{"X-Sig", "bm90IHRoZSBzaWduYXR1cmU="}, 401, "unauthenticated"},
		{"signed", body, []string{"Authorization", "Bearer wf"}, 401, "unauthenticated"},
		{"signed", `{"id": "run-1"}`, []string{"X-Sig", good}, 401, "unauthenticated"},
	} {
		resp, p := r.post(t, tc.typ, tc.body, tc.hdr...)
		if resp.StatusCode != tc.status || p["code"] != tc.code {
			t.Errorf("%s %s %v: %d %v, want %d %s", tc.typ, tc.body, tc.hdr, resp.StatusCode, p, tc.status, tc.code)
		}
	}
	if r.calls.Load() != 0 {
		t.Fatalf("the provider was called %d times", r.calls.Load())
	}
	resp, op := r.post(t, "signed", body, "X-Sig", good)
	if resp.StatusCode != 200 || op["key"] != "run-1" || op["namespace"] != "shop" || r.calls.Load() != 1 {
		t.Fatalf("signed: %d %v", resp.StatusCode, op)
	}
}
