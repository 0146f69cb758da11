package execute_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/execute"
	"github.com/opshandoff/handoff/sandbox"
	"github.com/opshandoff/handoff/store/storetest"
)

const secret = "sk_test_51ExecuteSecretNeverShown"

// rig is a provider in the sandbox behind a fault injector, a ledger and
// an executor that may reach loopback.
type rig struct {
	t      *testing.T
	ctx    context.Context
	ledger *domain.Ledger
	x      *execute.Executor
	sbx    *sandbox.Sandbox
	srv    *httptest.Server
	logs   *bytes.Buffer

	mu     sync.Mutex
	faults map[string][]string // by provider key: the next requests' faults
	auth   []string            // the Authorization headers seen
	forms  []string            // form bodies seen
}

var workflow = domain.Actor{Kind: domain.ActorWorkflow, Name: "flow", Namespace: "ns"}

func newRig(t *testing.T, idem string) *rig {
	t.Helper()
	r := &rig{t: t, ctx: context.Background(), faults: map[string][]string{}, logs: &bytes.Buffer{}}
	sbx, err := sandbox.New(sandbox.Config{Idempotency: idem, Retention: time.Hour, Lookup: sandbox.LookupAuthoritative,
		Hold: 5 * time.Second, RetryAfter: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r.sbx = sbx
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		key := req.Header.Get("Idempotency-Key")
		r.mu.Lock()
		r.auth = append(r.auth, req.Header.Get("Authorization"))
		if fs := r.faults[key]; len(fs) > 0 {
			req.Header.Set(sandbox.FaultHeader, fs[0])
			r.faults[key] = fs[1:]
		}
		r.mu.Unlock()
		if req.URL.Path == "/form" {
			b := new(bytes.Buffer)
			_, _ = b.ReadFrom(req.Body)
			r.mu.Lock()
			r.forms = append(r.forms, req.Header.Get("Content-Type")+" "+b.String())
			r.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"id": 42}`))
			return
		}
		sbx.Handler().ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	r.ledger = domain.NewLedger(storetest.New(t), cards(r.srv.URL))
	r.x = &execute.Executor{Workflow: r.ledger.Workflow, Caller: execute.NewCaller(true, func(k string) string {
		if k == "PROVIDER_TOKEN" {
			return secret
		}
		return ""
	}), Worker: "replica-1", Log: slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	return r
}

func cards(base string) domain.Cards {
	adapter := domain.ExecuteAdapter{Method: "POST", URL: base + "/execute", AuthEnv: "PROVIDER_TOKEN",
		Body: domain.ExecuteBodyTemplate, Template: json.RawMessage(`{"key": "{provider_key}", "params": "{content}"}`),
		Timeout: 2 * time.Second, CompletedStatus: []int{200}, CompletedRef: "/ref"}
	dedup := domain.Card{Name: "charge", Provider: "sandbox", ProviderIdempotency: domain.IdempotencyKey,
		ProviderKeyRetention: time.Hour, Lookup: domain.LookupNone, RetryLayer: domain.RetryByHandoff,
		Retry:     domain.RetryPolicy{MaxAttempts: 5, Backoff: time.Second, BackoffMax: 2 * time.Second},
		Retryable: []domain.ErrorClass{domain.ClassTransient, domain.ClassRateLimited},
		Terminal:  []domain.ErrorClass{domain.ClassValidation, domain.ClassAuth}, Lease: 30 * time.Second,
		ExecuteAdapter: &adapter, TwinsAllowed: true}
	plain := dedup
	plain.Name, plain.ProviderIdempotency, plain.ProviderKeyRetention = "mail", domain.IdempotencyNone, 0
	form := dedup
	fa := adapter
	fa.URL, fa.Body, fa.Template, fa.CompletedRef = base+"/form", domain.ExecuteBodyForm, nil, "/id"
	form.Name, form.ExecuteAdapter = "form", &fa
	return domain.Cards{dedup.Name: dedup, plain.Name: plain, form.Name: form}
}

func (r *rig) fault(key string, faults ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.faults[key] = append(r.faults[key], faults...)
}

// do starts an execution of key and waits for it.
func (r *rig) do(typ, key, content string) domain.Operation {
	r.t.Helper()
	run, err := r.x.Start(r.ctx, workflow, typ, domain.ExecuteInput{Key: key, Content: json.RawMessage(content)})
	if err != nil {
		r.t.Fatal(err)
	}
	if run.Done != nil {
		<-run.Done
	}
	op, err := r.ledger.Workflow.Get(r.ctx, workflow, run.Operation.ID)
	if err != nil {
		r.t.Fatal(err)
	}
	return op
}

func TestExecute_Completes(t *testing.T) {
	r := newRig(t, sandbox.IdempotencyKey)
	op := r.do("charge", "order-1", `{"amount": 5}`)
	if op.State != domain.Completed || op.Result == nil || op.Result.Ref != "sbx_1" {
		t.Fatalf("%s %+v", op.State, op.Result)
	}
	if n := r.sbx.Executions(op.ProviderKey); n != 1 {
		t.Fatalf("executed %d times under the provider key", n)
	}
	if r.auth[0] != "Bearer "+secret {
		t.Fatalf("the provider got Authorization %q", r.auth[0])
	}
	// A second request for the key is a replay: nothing is called.
	run, err := r.x.Start(r.ctx, workflow, "charge", domain.ExecuteInput{Key: "order-1", Content: json.RawMessage(`{"amount": 5}`)})
	if err != nil || run.Done != nil || run.Refused == nil || run.Refused.Reason != domain.RefusedCompleted {
		t.Fatalf("replay: %+v %v", run, err)
	}
	if len(r.auth) != 1 {
		t.Fatalf("the provider was called %d times", len(r.auth))
	}
	r.noSecret(op.ID)
}

// TestExecute_Classifies: each answer and each failure settles as the card
// and the ledger's rules say, and "not sent" is recorded as such.
func TestExecute_Classifies(t *testing.T) {
	r := newRig(t, sandbox.IdempotencyNone)
	key := func(k string) string { return domain.ProviderKeyFor("ns", k) }

	r.fault(key("k-timeout"), sandbox.FaultTimeoutAfter)
	op := r.do("mail", "k-timeout", `{"n": 1}`)
	if op.State != domain.UnknownOutcome || op.LastError.Code != "timeout" || r.sbx.Executions(op.ProviderKey) != 1 {
		t.Fatalf("timeout after executing: %s %+v, executed %d", op.State, op.LastError, r.sbx.Executions(op.ProviderKey))
	}

	r.fault(key("k-503"), sandbox.FaultServerError)
	op = r.do("mail", "k-503", `{"n": 2}`)
	if op.State != domain.UnknownOutcome || op.LastError.Code != "http_503" {
		t.Fatalf("503 from a provider without de-duplication leaves doubt: %s %+v", op.State, op.LastError)
	}

	r.fault(key("k-400"), sandbox.FaultValidation)
	op = r.do("mail", "k-400", `{"n": 3}`)
	if op.State != domain.FailedTerminal || op.LastError.Code != "http_400" {
		t.Fatalf("400: %s %+v", op.State, op.LastError)
	}

	r.fault(key("k-429"), sandbox.FaultRateLimited)
	before := time.Now()
	op = r.do("mail", "k-429", `{"n": 4}`)
	if op.State != domain.FailedRetryable || op.LastError.Code != "http_429" || op.NextRetryAt == nil ||
		op.NextRetryAt.Before(before.Add(3*time.Second)) {
		t.Fatalf("429 with Retry-After 3: %s %+v next %v", op.State, op.LastError, op.NextRetryAt)
	}
}

// TestExecute_ServerErrorResentWithinRetention: a provider that
// de-duplicates by key may be asked again after a 503; the ledger records
// why.
func TestExecute_ServerErrorResentWithinRetention(t *testing.T) {
	r := newRig(t, sandbox.IdempotencyKey)
	r.fault(domain.ProviderKeyFor("ns", "k"), sandbox.FaultServerError)
	op := r.do("charge", "k", `{"n": 1}`)
	if op.State != domain.FailedRetryable || op.LastError.Code != domain.CodeResendGuarded {
		t.Fatalf("%s %+v", op.State, op.LastError)
	}
}

// TestExecute_RefusedConnectionIsNotSent: no connection, nothing sent: the
// operation never began and waits for a retry.
func TestExecute_RefusedConnectionIsNotSent(t *testing.T) {
	r := newRig(t, sandbox.IdempotencyNone)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := r.ledger.Cards["mail"]
	a := *c.ExecuteAdapter
	a.URL = "http://" + addr + "/execute"
	c.ExecuteAdapter = &a
	r.ledger.Cards["mail"] = c
	op := r.do("mail", "k", `{"n": 1}`)
	if op.State != domain.FailedRetryable || op.LastError.Code != "not_sent" || op.ProviderKeyFirstSentAt != nil {
		t.Fatalf("%s %+v first sent %v", op.State, op.LastError, op.ProviderKeyFirstSentAt)
	}
	tl, err := r.ledger.Workflow.Timeline(r.ctx, workflow, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range tl {
		if ev.ToState == domain.ActionPending.String() {
			t.Fatalf("a call never sent must never begin: %+v", ev)
		}
	}
}

// TestExecute_FormBody: a form-encoded provider gets the content's fields.
func TestExecute_FormBody(t *testing.T) {
	r := newRig(t, sandbox.IdempotencyNone)
	op := r.do("form", "k", `{"to": "a+b@example.com", "n": 2}`)
	if op.State != domain.Completed || op.Result.Ref != "42" {
		t.Fatalf("%s %+v", op.State, op.Result)
	}
	if len(r.forms) != 1 || r.forms[0] != "application/x-www-form-urlencoded n=2&to=a%2Bb%40example.com" {
		t.Fatalf("form %q", r.forms)
	}
}

// TestExecute_SSRF: without HANDOFF_EXECUTE_ALLOW_PRIVATE no private,
// loopback, link-local or metadata address is reached, in any spelling,
// and no redirect is followed.
func TestExecute_SSRF(t *testing.T) {
	hit := make(chan string, 10)
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { hit <- req.URL.Path }))
	defer target.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(target.URL, "http://"))
	caller := execute.NewCaller(false, nil)
	for _, u := range []string{target.URL, "http://localhost:" + port, "http://[::1]:" + port, "http://[::ffff:127.0.0.1]:" + port,
		"http://169.254.169.254/latest/meta-data", "http://[fe80::1]:" + port, "http://10.0.0.1:" + port, "http://0x7f000001:" + port,
		"http://2130706433:" + port, "http://[fd00:ec2::254]/latest"} {
		a := domain.ExecuteAdapter{Method: "POST", URL: u + "/x", Body: domain.ExecuteBodyContent, Timeout: time.Second,
			CompletedStatus: []int{200}, CompletedRef: "/id"}
		began := false
		call := caller.Call(context.Background(), a, domain.Operation{ProviderKey: "hk", Content: []byte(`{}`)},
			func() error { began = true; return nil })
		if call.Sent || began || call.Settle.Outcome != domain.OutcomeFailedTerminal && call.Settle.Outcome != domain.OutcomeFailedRetryable {
			t.Errorf("%s: sent %v began %v %+v", u, call.Sent, began, call.Settle)
		}
	}
	select {
	case p := <-hit:
		t.Fatalf("a private address was reached: %s", p)
	default:
	}
	// A redirect is the answer, not a second request.
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		http.Redirect(w, req, target.URL+"/stolen", http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()
	a := domain.ExecuteAdapter{Method: "POST", URL: redirect.URL + "/x", Body: domain.ExecuteBodyContent, Timeout: time.Second,
		CompletedStatus: []int{200}, CompletedRef: "/id"}
	call := execute.NewCaller(true, nil).Call(context.Background(), a, domain.Operation{ProviderKey: "hk", Content: []byte(`{}`)},
		func() error { return nil })
	if !call.Sent || call.Status != http.StatusTemporaryRedirect || call.Settle.Outcome != domain.OutcomeUnknown {
		t.Fatalf("redirect: %+v", call)
	}
	select {
	case p := <-hit:
		t.Fatalf("the redirect was followed to %s", p)
	default:
	}
}

// TestExecute_BeginFailsNothingSent: when the begin cannot be recorded
// the connection is dropped before a byte is written.
func TestExecute_BeginFailsNothingSent(t *testing.T) {
	got := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { got <- struct{}{} }))
	defer srv.Close()
	a := domain.ExecuteAdapter{Method: "POST", URL: srv.URL + "/x", Body: domain.ExecuteBodyContent, Timeout: time.Second,
		CompletedStatus: []int{200}, CompletedRef: "/id"}
	call := execute.NewCaller(true, nil).Call(context.Background(), a, domain.Operation{ProviderKey: "hk", Content: []byte(`{}`)},
		func() error { return domain.Errorf(domain.EStaleLease, "lease lost") })
	if call.Sent || call.Settle.Outcome != (domain.Outcome{}) {
		t.Fatalf("%+v", call)
	}
	select {
	case <-got:
		t.Fatal("the provider received a request whose begin failed")
	case <-time.After(100 * time.Millisecond):
	}
}

// noSecret: the secret is in no timeline event, no answer and no log line.
func (r *rig) noSecret(id string) {
	r.t.Helper()
	tl, err := r.ledger.Workflow.Timeline(r.ctx, workflow, id)
	if err != nil {
		r.t.Fatal(err)
	}
	b, _ := json.Marshal(tl)
	op, _ := r.ledger.Workflow.Get(r.ctx, workflow, id)
	ob, _ := json.Marshal(op)
	atts, _ := r.ledger.Workflow.Attempts(r.ctx, workflow, id)
	ab, _ := json.Marshal(atts)
	for what, s := range map[string]string{"timeline": string(b), "operation": string(ob), "attempts": string(ab), "logs": r.logs.String()} {
		if strings.Contains(s, secret) || strings.Contains(s, "sk_test_51") {
			r.t.Fatalf("the secret is in the %s", what)
		}
	}
}
