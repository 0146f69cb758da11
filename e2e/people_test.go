package e2e

import (
	"context"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/auth/oidctest"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/internal/freeport"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestPeople_OIDC signs a person in to the real binary through a real OIDC
// provider, and has people act on the API with their JWTs.
func TestPeople_OIDC(t *testing.T) {
	idp := oidctest.Start(t)
	s := startServer(t, "HANDOFF_OIDC_ISSUER="+idp.Issuer(), "HANDOFF_OIDC_CLIENT_ID="+idp.ClientID,
		"HANDOFF_OIDC_CLIENT_SECRET="+idp.ClientSecret, "HANDOFF_ROLE_MAP=ops=operator,viewers=viewer",
		"HANDOFF_AUDIT_CHECKPOINT_INTERVAL=10ms") // checkpoints land between the steps, as on a loaded machine
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	step := func(method, target string, headers ...string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(method, target, nil)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		resp, err := browser.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, target, err)
		}
		resp.Body.Close()
		return resp
	}

	ann := oidctest.Person{Subject: "u-ann", Email: "ann@example.com", Name: "Ann", Groups: []string{"ops"}}
	idp.Next(ann)
	toProvider := step("GET", s.URL+"/auth/start?next=/desk/queue")
	toCallback := step("GET", toProvider.Header.Get("Location"))
	cb := toCallback.Header.Get("Location")
	if !strings.HasPrefix(cb, s.URL+"/auth/callback?") {
		t.Fatalf("the provider sent the browser to %q; the redirect URL should default to http://HANDOFF_ADDR/auth/callback", cb)
	}
	if done := step("GET", cb); done.StatusCode != http.StatusSeeOther || done.Header.Get("Location") != "/desk/queue" {
		t.Fatalf("callback: %d %s", done.StatusCode, done.Header.Get("Location"))
	}
	u, _ := url.Parse(s.URL)
	if len(jar.Cookies(u)) != 1 || jar.Cookies(u)[0].Name != "handoff_session" {
		t.Fatalf("cookies after sign-in: %v", jar.Cookies(u))
	}
	if desk := step("GET", s.URL+"/desk/queue"); desk.StatusCode != http.StatusOK {
		t.Fatalf("the desk with the session: %d %s", desk.StatusCode, desk.Header.Get("Location"))
	}
	if api := step("GET", s.URL+"/v1/operations"); api.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/v1 with only the session cookie: %d", api.StatusCode)
	}

	// The sign-in is in the system audit stream, with who and what role.
	db, err := store.Connect(envOf(s, "HANDOFF_DATABASE_URL"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	events, err := db.Timeline(context.Background(), domain.SystemStream)
	if err != nil || len(events) == 0 {
		t.Fatalf("system events: %v %v", events, err)
	}
	// The audit checkpointer writes to the same stream whenever it likes, so
	// the sign-in is found by its action, not by being the stream's last.
	var signIns []domain.AuditEvent
	for _, e := range events {
		if e.Action == "signed_in" {
			signIns = append(signIns, e)
		}
	}
	if len(signIns) != 1 {
		t.Fatalf("one sign-in, %d sign-in events in the system stream: %+v", len(signIns), events)
	}
	if e := signIns[0]; e.Actor.Issuer != idp.Issuer() || e.Actor.Subject != "u-ann" ||
		e.Actor.Email != "ann@example.com" || e.Actor.Role != domain.RoleOperator {
		t.Fatalf("sign-in event: %+v", e)
	}

	// A script acts as a person with the person's JWT; a viewer may not.
	op := s.do(t, "POST", "/v1/operations", map[string]any{"key": "e2e:people", "type": "crm.task.create", "content": map[string]any{"a": 1}})
	if op.Status != 201 {
		t.Fatalf("register: %d %s", op.Status, op.Raw)
	}
	note := map[string]any{"text": "called the provider"}
	path := "/v1/operations/" + str(op.Body, "id") + "/notes"
	if r := s.call(t, idp.IDToken(t, ann), "POST", path, note); r.Status != 200 {
		t.Fatalf("operator's note: %d %s", r.Status, r.Raw)
	}
	viewer := oidctest.Person{Subject: "u-vic", Email: "vic@example.com", Groups: []string{"viewers"}}
	if r := s.call(t, idp.IDToken(t, viewer), "POST", path, note); r.Status != 403 {
		t.Fatalf("viewer's note: %d %s", r.Status, r.Raw)
	}
	if r := s.call(t, s.Token, "POST", path, note); r.Status != 403 {
		t.Fatalf("workflow's note: %d %s", r.Status, r.Raw)
	}

	// Sign-out: refused cross-site, done same-origin, and the session is gone.
	if out := step("POST", s.URL+"/auth/logout", "Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example.com"); out.StatusCode != http.StatusForbidden {
		t.Fatalf("cross-site sign-out: %d", out.StatusCode)
	}
	if out := step("POST", s.URL+"/auth/logout", "Sec-Fetch-Site", "same-origin", "Origin", s.URL); out.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", out.StatusCode)
	}
	if desk := step("GET", s.URL+"/desk/queue"); desk.StatusCode != http.StatusSeeOther {
		t.Fatalf("the desk after sign-out: %d", desk.StatusCode)
	}
}

func envOf(s *server, key string) string {
	v := ""
	for _, kv := range s.env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val // the last one wins, as in exec
		}
	}
	return v
}

// serveFails runs `handoff serve` expecting it to refuse to start, and
// returns what it said.
func serveFails(t *testing.T, extra ...string) string {
	t.Helper()
	env := []string{"HANDOFF_DATABASE_URL=" + storetest.URL(t), "HANDOFF_CARDS=testdata/cards.yaml"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HANDOFF_") {
			env = append(env, kv)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, handoffBinary(t), "serve")
	cmd.Env = append(env, extra...)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err == nil || ctx.Err() != nil {
		t.Fatalf("serve did not refuse to start (err %v, after %s):\n%s", err, time.Since(start), out)
	}
	return string(out)
}

// freeAddr is an address on host for a server the test starts
// (internal/freeport: not one another process may take meanwhile).
func freeAddr(t testing.TB, host string) string {
	t.Helper()
	addr, err := freeport.Addr(host)
	if err != nil {
		t.Fatal(err)
	}
	return addr
}

func TestServe_DevelopmentSignInNeedsLoopback(t *testing.T) {
	for _, addr := range []string{freeAddr(t, "0.0.0.0"), ":" + strings.Split(freeAddr(t, "127.0.0.1"), ":")[1]} {
		out := serveFails(t, "HANDOFF_ADDR="+addr)
		if !strings.Contains(out, "loopback") || !strings.Contains(out, "HANDOFF_OIDC_ISSUER") {
			t.Errorf("HANDOFF_ADDR=%s: the refusal does not say why:\n%s", addr, out)
		}
	}
}

func TestServe_OIDCProviderUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	issuer := "http://" + ln.Addr().String() + "/realms/ops"
	start := time.Now()
	out := serveFails(t, "HANDOFF_ADDR="+freeAddr(t, "127.0.0.1"), "HANDOFF_OIDC_ISSUER="+issuer, "HANDOFF_OIDC_CLIENT_ID=handoff",
		"HANDOFF_OIDC_CLIENT_SECRET=s3cret-value", "HANDOFF_ROLE_MAP=ops=operator", "HANDOFF_OIDC_DISCOVERY_TIMEOUT=1s")
	if !strings.Contains(out, issuer) || !strings.Contains(out, "did not answer") || strings.Contains(out, "s3cret-value") {
		t.Fatalf("unclear refusal:\n%s", out)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("took %s to give up", took)
	}
}
