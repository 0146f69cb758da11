package e2e

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/store/storetest"
)

const notifySecret = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD"

// receiver is a webhook receiver on loopback that checks every delivery
// with a verifier written from the Standard Webhooks specification (no
// code of Handoff's): HMAC-SHA256, keyed with the base64 after "whsec_",
// over "webhook-id.webhook-timestamp.body", sent as "v1,<base64>".
type receiver struct {
	t    *testing.T
	mu   sync.Mutex
	seen map[string]int // webhook-id → deliveries
	ops  map[string]string
	// incidents are the incident notices in arrival order: "type id +new
	// reopened=bool".
	incidents []string
	// hold, when set, blocks the next delivery until it is closed and
	// reports its webhook-id on held.
	hold chan struct{}
	held chan string
	got  chan string
}

func newReceiver(t *testing.T) (*receiver, string) {
	r := &receiver{t: t, seen: map[string]int{}, ops: map[string]string{}, got: make(chan string, 1000)}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	id, ts := req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp")
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(notifySecret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if !strings.Contains(" "+req.Header.Get("webhook-signature")+" ", " "+want+" ") {
		r.t.Errorf("delivery %s: signature %q does not verify", id, req.Header.Get("webhook-signature"))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var msg struct {
		Type string `json:"type"`
		Data struct {
			ID       string `json:"id"`
			DeskURL  string `json:"desk_url"`
			Incident *struct {
				ID       string `json:"id"`
				NewItems int    `json:"new_items"`
				Reopened bool   `json:"reopened"`
			} `json:"incident"`
			// EnteredDeskAt is when it came to wait on a person (API.md).
			EnteredDeskAt *time.Time `json:"entered_desk_at"`
		} `json:"data"`
	}
	err := json.Unmarshal(body, &msg)
	page := "/desk/operations/" + msg.Data.ID
	if in := msg.Data.Incident; in != nil {
		page = "/desk/incidents/" + in.ID // an incident's notice leads to the incident
	}
	if err != nil || msg.Data.ID == "" || !strings.HasSuffix(msg.Data.DeskURL, page) {
		r.t.Errorf("delivery %s: body %s", id, body)
	}
	if msg.Type != "operation.resolved" && (msg.Data.EnteredDeskAt == nil || msg.Data.EnteredDeskAt.IsZero()) {
		r.t.Errorf("delivery %s (%s) has no entered_desk_at: %s", id, msg.Type, body)
	}
	r.mu.Lock()
	hold := r.hold
	r.hold = nil
	r.mu.Unlock()
	if hold != nil {
		r.held <- id
		select {
		case <-hold:
		case <-req.Context().Done():
		}
		return
	}
	r.mu.Lock()
	r.seen[id]++
	r.ops[id] = msg.Type + " " + msg.Data.ID
	if in := msg.Data.Incident; in != nil {
		r.incidents = append(r.incidents, fmt.Sprintf("%s %s +%d reopened=%t", msg.Type, in.ID, in.NewItems, in.Reopened))
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
	r.got <- id
}

func (r *receiver) distinct() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// process is a `handoff serve` this test can kill with SIGKILL.
type process struct {
	cmd  *exec.Cmd
	logs *syncBuffer
}

func startProcess(t *testing.T, s *server) *process {
	t.Helper()
	cmd := exec.Command(s.bin, "serve")
	cmd.Env = s.env
	p := &process{cmd: cmd, logs: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", p.logs.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not become ready: %v\n%s", err, p.logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replicaOf is another server process on s's database, at its own address.
func replicaOf(t *testing.T, s *server) *server {
	addr := freeAddr(t, "127.0.0.1")
	r := *s
	r.URL = "http://" + addr
	r.env = append(append([]string{}, s.env...), "HANDOFF_ADDR="+addr)
	return &r
}

func notifyEnv(url string) []string {
	return []string{"HANDOFF_NOTIFY_URL=" + url, "HANDOFF_NOTIFY_SECRET=" + notifySecret,
		"HANDOFF_NOTIFY_ALLOW_PRIVATE=true", "HANDOFF_NOTIFY_TIMEOUT=1s"}
}

func awaitApproval(t *testing.T, s *server, key string) string {
	t.Helper()
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": key, "type": "coupon.issue", "content": map[string]any{"k": key}})
	if r.Status != 201 || str(r.Body, "state") != "awaiting_approval" {
		t.Errorf("register %s: %d %s", key, r.Status, r.Raw) // Errorf: called from goroutines too
	}
	return str(r.Body, "id")
}

// TestNotifications_SurviveKill9: the server is killed with SIGKILL while a
// committed desk entry's delivery is in flight; after a restart the
// notification arrives, with the webhook-id of the interrupted attempt and
// a signature the receiver verifies. The other desk entries arrive once.
func TestNotifications_SurviveKill9(t *testing.T) {
	rx, url := newReceiver(t)
	rx.hold, rx.held = make(chan struct{}), make(chan string, 1)
	s := bootstrap(t, notifyEnv(url)...)
	p := startProcess(t, s)
	first := awaitApproval(t, s, "k0")
	var heldID string
	select {
	case heldID = <-rx.held:
	case <-time.After(30 * time.Second):
		t.Fatal("no delivery attempt")
	}
	if err := p.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown, no record of the attempt
		t.Fatal(err)
	}
	_ = p.cmd.Wait()

	startProcess(t, s)
	second := awaitApproval(t, s, "k1")
	deadline := time.After(60 * time.Second)
	for rx.distinct() < 2 {
		select {
		case <-rx.got:
		case <-deadline:
			t.Fatalf("after the restart %d of 2 notifications arrived", rx.distinct())
		}
	}
	rx.mu.Lock()
	defer rx.mu.Unlock()
	if rx.seen[heldID] != 1 || rx.ops[heldID] != "operation.approval_requested "+first {
		t.Fatalf("the interrupted notification %s: %d deliveries, %q", heldID, rx.seen[heldID], rx.ops[heldID])
	}
	for id, n := range rx.seen {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
		if id != heldID && rx.ops[id] != "operation.approval_requested "+second {
			t.Errorf("%s: %q", id, rx.ops[id])
		}
	}
}

// TestNotifications_ThreeReplicas: three servers on one database, 200 desk
// entries spread over them: 200 distinct webhook-ids arrive, each once.
func TestNotifications_ThreeReplicas(t *testing.T) {
	rx, url := newReceiver(t)
	s := bootstrap(t, notifyEnv(url)...)
	servers := []*server{s, replicaOf(t, s), replicaOf(t, s)}
	for _, r := range servers {
		startProcess(t, r)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 200; i += 4 {
				awaitApproval(t, servers[i%3], fmt.Sprintf("k%d", i))
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for rx.distinct() < 200 {
		select {
		case <-rx.got:
		case <-ctx.Done():
			t.Fatalf("%d of 200 notifications arrived", rx.distinct())
		}
	}
	rx.mu.Lock()
	defer rx.mu.Unlock()
	ops := map[string]bool{}
	for id, n := range rx.seen {
		if n != 1 {
			t.Errorf("%s delivered %d times", id, n)
		}
		ops[rx.ops[id]] = true
	}
	if len(rx.seen) != 200 || len(ops) != 200 {
		t.Fatalf("%d webhook-ids for %d operations, want 200 and 200", len(rx.seen), len(ops))
	}
}

// bootstrap prepares a server on a fresh database — address, environment,
// a workflow token — without starting it.
func bootstrap(t *testing.T, extra ...string) *server {
	t.Helper()
	bin := handoffBinary(t)
	addr := freeAddr(t, "127.0.0.1")
	env := append(os.Environ(), "HANDOFF_DATABASE_URL="+storetest.URL(t), "HANDOFF_ADDR="+addr,
		"HANDOFF_CARDS=testdata/cards.yaml", "HANDOFF_SWEEP_INTERVAL=100ms")
	s := &server{URL: "http://" + addr, env: append(env, extra...), bin: bin}
	s.Token = s.createToken(t, "campaigns", "e2e")
	return s
}
