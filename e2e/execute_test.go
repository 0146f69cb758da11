package e2e

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/sandbox"
)

const (
	executeSecret = "sk_live_51ExecuteTokenNeverShown"
	shopifySecret = "shpss_e2e_flow_app_secret"
)

// provider is two sandboxes behind one port that goes down now and then
// (connections refused): /dedup de-duplicates by key, /plain does not and
// is looked up on a port that stays up. Faults are injected by key.
type provider struct {
	dedup, plain *sandbox.Sandbox
	lookups      *httptest.Server
	addr         string

	mu     sync.Mutex
	faults map[string]string // provider key → the fault of its first request
	seen   map[string]int    // provider key → requests received
	auth   map[string]bool   // Authorization headers received
	ln     net.Listener
	srv    *http.Server
	down   atomic.Int64 // refusal windows so far
}

func newProvider(t *testing.T) *provider {
	t.Helper()
	p := &provider{faults: map[string]string{}, seen: map[string]int{}, auth: map[string]bool{}}
	var err error
	if p.dedup, err = sandbox.New(sandbox.Config{Idempotency: sandbox.IdempotencyKey, Retention: 24 * time.Hour,
		Lookup: sandbox.LookupNone, Hold: 4 * time.Second, RetryAfter: time.Second}); err != nil {
		t.Fatal(err)
	}
	if p.plain, err = sandbox.New(sandbox.Config{Idempotency: sandbox.IdempotencyNone, Lookup: sandbox.LookupAuthoritative,
		Hold: 4 * time.Second, RetryAfter: time.Second}); err != nil {
		t.Fatal(err)
	}
	p.lookups = httptest.NewServer(p.plain.Handler())
	t.Cleanup(p.lookups.Close)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct{ Key string }
		_ = json.Unmarshal(body, &req)
		p.mu.Lock()
		p.seen[req.Key]++
		p.auth[r.Header.Get("Authorization")] = true
		if f := p.faults[req.Key]; f != "" && p.seen[req.Key] == 1 {
			r.Header.Set(sandbox.FaultHeader, f)
		}
		p.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		sb := p.plain
		if strings.HasPrefix(r.URL.Path, "/dedup/") {
			sb = p.dedup
		}
		r.URL.Path = "/" + r.URL.Path[strings.Index(r.URL.Path[1:], "/")+2:]
		sb.Handler().ServeHTTP(w, r)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr, p.ln = ln.Addr().String(), ln
	p.srv = &http.Server{Handler: handler}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { p.srv.Close() })
	return p
}

// flap takes the port down for 150 ms every 600 ms until stop closes:
// calls made then are refused before a byte is sent.
func (p *provider) flap(t *testing.T, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(600 * time.Millisecond):
		}
		p.mu.Lock()
		_ = p.ln.Close()
		p.mu.Unlock()
		p.down.Add(1)
		time.Sleep(150 * time.Millisecond)
		var ln net.Listener
		var err error
		for i := 0; i < 50; i++ {
			if ln, err = net.Listen("tcp", p.addr); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("the provider's port could not be opened again: %v", err)
			return
		}
		p.mu.Lock()
		p.ln = ln
		p.mu.Unlock()
		go func() { _ = p.srv.Serve(ln) }()
	}
}

func (p *provider) setFault(pk, fault string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.faults[pk] = fault
}

func (p *provider) asked(pk string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[pk]
}

func executeCards(t *testing.T, p *provider) string {
	t.Helper()
	adapter := func(prefix string) string {
		return `  execute_adapter:
    request:
      url: "http://` + p.addr + `/` + prefix + `/execute"
      auth_env: E2E_PROVIDER_TOKEN
      body: template
      template: {key: "{provider_key}", params: "{content}"}
      timeout: 2s
    completed: {status: [200], ref: /ref}
`
	}
	common := `  retry: {max_attempts: 20, backoff: 200ms, backoff_max: 1s}
  retryable: [transient, rate_limited]
  terminal: [validation, auth, permission]
  lease: 10s
  retry_layer: handoff
  twins: allow
`
	cards := `- name: pay.dedup
  provider: sandbox
  provider_idempotency: key
  provider_key_retention: 24h
` + common + adapter("dedup") + `  execute_endpoint: {wait: 3s}
- name: mail.plain
  provider: sandbox
  provider_idempotency: none
  lookup: api
  lookup_authoritative: true
  lookup_adapter:
    request: {method: GET, url: "` + p.lookups.URL + `/v1/records/{provider_key}"}
    found: {status: [200], ref: /id, key: /external_id}
    not_found: {status: [404]}
` + common + adapter("plain") + `  execute_endpoint: {wait: 3s}
- name: shop.tag
  provider: sandbox
  provider_idempotency: key
  provider_key_retention: 24h
` + common + adapter("dedup") + `  execute_endpoint:
    key: /action_run_id
    content: /properties
    signature: {header: X-Shopify-Hmac-SHA256, secret_env: E2E_SHOPIFY_SECRET, namespace: shop, name: shopify-flow}
`
	f := filepath.Join(t.TempDir(), "cards.yaml")
	if err := os.WriteFile(f, []byte(cards), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

func startExecuteServer(t *testing.T, p *provider) *server {
	t.Helper()
	return startServer(t, "HANDOFF_CARDS="+executeCards(t, p), "HANDOFF_EXECUTE_ALLOW_PRIVATE=true",
		"HANDOFF_LOOKUP_ALLOW_PRIVATE=true", "E2E_PROVIDER_TOKEN="+executeSecret, "E2E_SHOPIFY_SECRET="+shopifySecret)
}

// executeRequest sends one POST /v1/execute/{type}; a client timeout is
// an error, as a workflow tool sees it.
func executeRequest(c *http.Client, s *server, typ, key string, content any, hdr ...string) (response, error) {
	raw, _ := json.Marshal(content)
	req, _ := http.NewRequest("POST", s.URL+"/v1/execute/"+typ, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	r := response{Status: resp.StatusCode, Header: resp.Header, Raw: b}
	_ = json.Unmarshal(b, &r.Body)
	return r, nil
}

// settledOperation polls the operation of key until it is completed or on
// the desk.
func settledOperation(t *testing.T, s *server, key string, within time.Duration) map[string]any {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r := s.do(t, "GET", "/v1/operations?key="+key, nil)
		items, _ := r.Body["items"].([]any)
		if len(items) == 1 {
			op := items[0].(map[string]any)
			if st := str(op, "state"); st == "completed" || st == "unknown_outcome" || st == "failed_terminal" {
				if st != "unknown_outcome" || dig(op, "desk_entered_at") != nil || time.Now().After(deadline) {
					return op
				}
			}
			if time.Now().After(deadline) {
				return op
			}
		} else if time.Now().After(deadline) {
			t.Fatalf("no operation under %s: %s", key, r.Raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestExecute_FaultsExactlyOnce: 200 requests over 50 keys from a client
// that gives up after 1 s and sends again, while the provider times out
// after executing (4 s), answers 503 and 429, and refuses connections now
// and then. Each key is executed at most once at the provider that does
// not de-duplicate; every lost answer is completed by the lookup (or left
// on the desk); every refused call is retried by Handoff and completed.
func TestExecute_FaultsExactlyOnce(t *testing.T) {
	p := newProvider(t)
	s := startExecuteServer(t, p)
	const keys, perKey = 50, 4
	type keyInfo struct{ typ, key, pk, fault string }
	infos := make([]keyInfo, keys)
	faults := []string{sandbox.FaultTimeoutAfter, sandbox.FaultServerError, sandbox.FaultRateLimited, "", ""}
	for i := range infos {
		typ := "mail.plain"
		if i%2 == 1 {
			typ = "pay.dedup"
		}
		key := fmt.Sprintf("evt_%03d:send", i)
		infos[i] = keyInfo{typ: typ, key: key, pk: domain.ProviderKeyFor("campaigns", key), fault: faults[(i/2)%len(faults)]}
		p.setFault(infos[i].pk, infos[i].fault)
	}
	stop := make(chan struct{})
	flapped := make(chan struct{})
	go func() { p.flap(t, stop); close(flapped) }()

	client := &http.Client{Timeout: time.Second}
	var sent, timeouts atomic.Int64
	work := make(chan keyInfo)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Go(func() {
			for k := range work {
				for n := 0; n < perKey; n++ {
					sent.Add(1)
					r, err := executeRequest(client, s, k.typ, k.key, map[string]any{"to": k.key})
					var ne net.Error
					switch {
					case errors.As(err, &ne) && ne.Timeout():
						timeouts.Add(1)
					case err != nil:
						t.Errorf("%s: %v", k.key, err)
					case r.Status >= 500 || r.Status == 422 || r.Status == 400:
						t.Errorf("%s: %d %s", k.key, r.Status, r.Raw)
					}
					time.Sleep(150 * time.Millisecond)
				}
			}
		})
	}
	for _, k := range infos {
		work <- k
	}
	close(work)
	wg.Wait()
	if sent.Load() != keys*perKey {
		t.Fatalf("sent %d requests", sent.Load())
	}
	close(stop)
	<-flapped

	refusedKeys := 0
	for _, k := range infos {
		op := settledOperation(t, s, k.key, 30*time.Second)
		st := str(op, "state")
		sb := p.plain
		if k.typ == "pay.dedup" {
			sb = p.dedup
		}
		execs := sb.Executions(k.pk)
		if execs > 1 {
			t.Errorf("%s (%s, fault %q) executed %d times at the provider", k.key, k.typ, k.fault, execs)
		}
		tl := s.do(t, "GET", "/v1/operations/"+str(op, "id")+"/timeline", nil)
		notSent := strings.Contains(string(tl.Raw), `"not_sent"`)
		if notSent {
			refusedKeys++
		}
		switch {
		case k.fault == sandbox.FaultTimeoutAfter && k.typ == "mail.plain":
			if st != "completed" && st != "unknown_outcome" {
				t.Errorf("%s timed out after executing: %s, want completed by the lookup or on the desk", k.key, st)
			}
			if st == "completed" && str(op, "result", "ref") == "" {
				t.Errorf("%s completed without the provider's reference", k.key)
			}
		case st != "completed":
			t.Errorf("%s (%s, fault %q, not sent once: %v) ended %s: %s", k.key, k.typ, k.fault, notSent, st, dig(op, "last_error"))
		}
		if st == "completed" && execs != 1 {
			t.Errorf("%s completed but executed %d times", k.key, execs)
		}
	}
	if p.down.Load() == 0 || refusedKeys == 0 {
		t.Errorf("no call met a refused connection (%d refusal windows): the case was not exercised", p.down.Load())
	}
	if timeouts.Load() == 0 {
		t.Error("no client request timed out: the client's own retries were not exercised")
	}
	for a := range p.auth {
		if a != "Bearer "+executeSecret {
			t.Errorf("the provider got Authorization %q", a)
		}
	}
	if strings.Contains(s.logs.String(), executeSecret) {
		t.Error("the provider's secret is in the server's log")
	}
	t.Logf("%d requests, %d client timeouts, %d refusal windows, %d keys met a refused connection",
		sent.Load(), timeouts.Load(), p.down.Load(), refusedKeys)
}

// TestExecute_AsyncCompletesByItself: Prefer: respond-async answers 202
// at once; the operation completes with no further request, after a 429
// that Handoff retries itself.
func TestExecute_AsyncCompletesByItself(t *testing.T) {
	p := newProvider(t)
	s := startExecuteServer(t, p)
	key := "evt_async:charge"
	pk := domain.ProviderKeyFor("campaigns", key)
	p.setFault(pk, sandbox.FaultRateLimited)
	start := time.Now()
	r, err := executeRequest(httpClient, s, "pay.dedup", key, map[string]any{"amount": 5}, "Prefer", "respond-async")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusAccepted || r.Header.Get("Location") != "/v1/operations/"+str(r.Body, "id") ||
		r.Header.Get("Preference-Applied") != "respond-async" || time.Since(start) > 2*time.Second {
		t.Fatalf("%d %v %s", r.Status, r.Header, r.Raw)
	}
	op := settledOperation(t, s, key, 20*time.Second)
	if str(op, "state") != "completed" || p.dedup.Executions(pk) != 1 || p.asked(pk) < 2 {
		t.Fatalf("%s, executed %d, asked %d", str(op, "state"), p.dedup.Executions(pk), p.asked(pk))
	}
	// The same key again is a replay: 200, the provider not asked again.
	asked := p.asked(pk)
	r, err = executeRequest(httpClient, s, "pay.dedup", key, map[string]any{"amount": 5})
	if err != nil || r.Status != 200 || r.Header.Get("Idempotent-Replayed") != "true" || str(r.Body, "result", "ref") == "" {
		t.Fatalf("replay: %v %d %v %s", err, r.Status, r.Header, r.Raw)
	}
	if p.asked(pk) != asked {
		t.Fatal("a replay called the provider")
	}
	// Other content under the key: 422.
	r, _ = executeRequest(httpClient, s, "pay.dedup", key, map[string]any{"amount": 6})
	if r.Status != 422 || str(r.Body, "code") != "fingerprint_mismatch" {
		t.Fatalf("other content: %d %s", r.Status, r.Raw)
	}
	// A person must decide: the problem names the state and the desk page.
	lost := "evt_lost:mail"
	p.setFault(domain.ProviderKeyFor("campaigns", lost), sandbox.FaultValidation)
	r, _ = executeRequest(httpClient, s, "mail.plain", lost, map[string]any{"to": "x"})
	if r.Status != 409 || str(r.Body, "reason") != "handed_off" || str(r.Body, "operation", "state") != "failed_terminal" ||
		!strings.Contains(str(r.Body, "detail"), "/desk/operations/") {
		t.Fatalf("failed_terminal: %d %s", r.Status, r.Raw)
	}
	// No bearer token: 401.
	req, _ := http.NewRequest("POST", s.URL+"/v1/execute/pay.dedup", strings.NewReader(`{}`))
	req.Header.Set("Idempotency-Key", "k")
	resp, err := httpClient.Do(req)
	if err != nil || resp.StatusCode != 401 {
		t.Fatalf("no token: %v %v", err, resp)
	}
	resp.Body.Close()
}

// TestExecute_ShopifyFlow: a Flow custom action's request, signed as Flow
// signs it, executes once across Flow's resend; a wrong signature is 401
// and records nothing.
func TestExecute_ShopifyFlow(t *testing.T) {
	p := newProvider(t)
	s := startExecuteServer(t, p)
	shopToken := s.createToken(t, "shop", "reader")
	body := []byte(`{"action_run_id":"4f1c2c8e-8b1e-4b7e-9a55-0c6a3f9f2b11","shop_id":48210,"properties":{"customer_id":"gid://shopify/Customer/1","tag":"vip"}}`)
	send := func(sig string) response {
		req, _ := http.NewRequest("POST", s.URL+"/v1/execute/shop.tag", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Shopify-Hmac-SHA256", sig)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		r := response{Status: resp.StatusCode, Header: resp.Header, Raw: b}
		_ = json.Unmarshal(b, &r.Body)
		return r
	}
	mac := hmac.New(sha256.New, []byte(shopifySecret))
	mac.Write(body)
	good := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	wrong := hmac.New(sha256.New, []byte("another secret"))
	wrong.Write(body)

	if r := send(base64.StdEncoding.EncodeToString(wrong.Sum(nil))); r.Status != 401 {
		t.Fatalf("a wrong signature: %d %s", r.Status, r.Raw)
	}
	if r := s.call(t, shopToken, "GET", "/v1/operations", nil); len(dig(r.Body, "items").([]any)) != 0 {
		t.Fatalf("a refused request recorded something: %s", r.Raw)
	}
	r := send(good)
	if r.Status != 200 || str(r.Body, "state") != "completed" || str(r.Body, "key") != "4f1c2c8e-8b1e-4b7e-9a55-0c6a3f9f2b11" ||
		str(r.Body, "namespace") != "shop" {
		t.Fatalf("Flow's request: %d %s", r.Status, r.Raw)
	}
	time.Sleep(500 * time.Millisecond) // Flow resends after 10 s
	again := send(good)
	if again.Status != 200 || again.Header.Get("Idempotent-Replayed") != "true" || str(again.Body, "id") != str(r.Body, "id") {
		t.Fatalf("Flow's resend: %d %v %s", again.Status, again.Header, again.Raw)
	}
	pk := str(r.Body, "provider_key")
	if n := p.dedup.Executions(pk); n != 1 || p.asked(pk) != 1 {
		t.Fatalf("executed %d times, the provider asked %d times", n, p.asked(pk))
	}
	if c := dig(r.Body, "content"); c == nil || str(r.Body, "content", "tag") != "vip" {
		t.Fatalf("the content is not the action's properties: %s", r.Raw)
	}
	// The secrets are in no answer, log or export.
	export := filepath.Join(t.TempDir(), "audit.jsonl")
	if _, err := s.handoff(t, "audit", "export", "-o", export); err != nil {
		t.Fatal(err)
	}
	exported, err := os.ReadFile(export)
	if err != nil || !strings.Contains(string(exported), str(r.Body, "id")) {
		t.Fatalf("the export does not hold the operation: %v", err)
	}
	for what, text := range map[string]string{"answer": string(r.Raw) + string(again.Raw), "log": s.logs.String(),
		"export": string(exported)} {
		if strings.Contains(text, shopifySecret) || strings.Contains(text, executeSecret) {
			t.Errorf("a secret is in the %s", what)
		}
	}
}

// TestExecute_ReplicaKilledMidCall: two replicas on one PostgreSQL; the one
// making a call is killed (SIGKILL) after the provider executed it. Its
// lease lapses, the other replica looks the call up and completes it, and
// the caller's retries to the other replica never execute it again.
func TestExecute_ReplicaKilledMidCall(t *testing.T) {
	needPostgres(t)
	p := newProvider(t)
	_, dbURL := namedDatabase(t)
	env := append(baseEnv(dbURL), "HANDOFF_CARDS="+executeCards(t, p), "HANDOFF_EXECUTE_ALLOW_PRIVATE=true",
		"HANDOFF_LOOKUP_ALLOW_PRIVATE=true", "E2E_PROVIDER_TOKEN="+executeSecret)
	a := launchProc(t, env)
	if err := a.ready(); err != nil {
		t.Fatal(err)
	}
	out, err := cli(t, env, "token", "create", "--namespace", "campaigns", "--name", "replicas")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	b := launchProc(t, env)
	if err := b.ready(); err != nil {
		t.Fatal(err)
	}
	defer b.stop()
	onA, onB := &server{URL: a.URL, Token: token}, &server{URL: b.URL, Token: token}

	key := "evt_kill:mail"
	pk := domain.ProviderKeyFor("campaigns", key)
	p.setFault(pk, sandbox.FaultTimeoutAfter) // executed, then the answer is held back
	r, err := executeRequest(httpClient, onA, "mail.plain", key, map[string]any{"to": "a"}, "Prefer", "respond-async")
	if err != nil || r.Status != http.StatusAccepted {
		t.Fatalf("%v %d %s", err, r.Status, r.Raw)
	}
	for deadline := time.Now().Add(10 * time.Second); p.plain.Executions(pk) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the provider was never called")
		}
	}
	_ = a.cmd.Process.Kill()
	<-a.exited

	// The caller retries on the other replica until it has an answer.
	var last response
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		last, err = executeRequest(httpClient, onB, "mail.plain", key, map[string]any{"to": "a"})
		if err != nil {
			t.Fatal(err)
		}
		if last.Status == 200 || time.Now().After(deadline) {
			break
		}
		if last.Status != 409 && last.Status != 202 {
			t.Fatalf("the retry on the other replica: %d %s", last.Status, last.Raw)
		}
	}
	if last.Status != 200 || str(last.Body, "state") != "completed" || str(last.Body, "result", "ref") == "" {
		t.Fatalf("after the kill: %d %s", last.Status, last.Raw)
	}
	if n := p.plain.Executions(pk); n != 1 || p.asked(pk) != 1 {
		t.Fatalf("executed %d times, the provider asked %d times", n, p.asked(pk))
	}
	tl := onB.do(t, "GET", "/v1/operations/"+str(last.Body, "id")+"/timeline", nil)
	if !strings.Contains(string(tl.Raw), "lease_expired") && !strings.Contains(string(tl.Raw), "expire") {
		t.Errorf("the timeline does not show the lapsed lease: %s", tl.Raw)
	}
}
