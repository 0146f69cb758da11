package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestFaults_WorkerKilledAfterBegunClaim: a worker process that got two
// claims with begin (the two-call lifecycle) is killed (SIGKILL) before it
// calls the provider. It leaves what docs/concepts/leases.md says that lifecycle costs:
// nobody knows whether the provider was called. The operation whose
// provider deduplicates by key inside its retention window is re-sent by
// the system under the same provider key (failed_retryable,
// resend_within_retention); the other waits on the desk (unknown_outcome).
func TestFaults_WorkerKilledAfterBegunClaim(t *testing.T) {
	s := startServer(t)
	worker := exec.Command(os.Args[0], "-test.run=^TestFaults_BegunClaimWorker$")
	worker.Env = append(os.Environ(), "HANDOFF_E2E_BEGUN_WORKER="+s.URL+" "+s.Token)
	out, err := worker.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	worker.Stderr = os.Stderr
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = worker.Process.Kill(); _ = worker.Wait() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatal("the worker said nothing")
	}
	var desk, resent, key string
	if _, err := fmt.Sscanf(lines.Text(), "claimed %s %s %s", &desk, &resent, &key); err != nil {
		t.Fatalf("worker: %q", lines.Text())
	}
	if err := worker.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = worker.Wait()

	// The leases (1 s) run out; the sweeper ends them.
	want := map[string]struct{ state, code, timeline string }{
		desk:   {"unknown_outcome", "lease_expired", "registered_and_began lease_expired"},
		resent: {"failed_retryable", "resend_within_retention", "registered_and_began lease_expired resend_within_retention"},
	}
	for id, w := range want {
		var op response
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			op = s.do(t, "GET", "/v1/operations/"+id, nil)
			if str(op.Body, "state") != "action_pending" || time.Now().After(deadline) {
				break
			}
		}
		if str(op.Body, "state") != w.state || str(op.Body, "last_error", "code") != w.code || op.Body["lease"] != nil {
			t.Fatalf("%s after the worker died: %s", id, op.Raw)
		}
		if id == resent && str(op.Body, "provider_key") != key {
			t.Fatalf("re-sent under provider key %q, first sent under %q", str(op.Body, "provider_key"), key)
		}
		tl := s.do(t, "GET", "/v1/operations/"+id+"/timeline", nil)
		var actions []string
		items, _ := tl.Body["items"].([]any)
		for _, it := range items {
			actions = append(actions, str(it.(map[string]any), "action"))
		}
		if got := strings.Join(actions, " "); got != w.timeline {
			t.Fatalf("%s: timeline %q, want %q", id, got, w.timeline)
		}
		atts := s.do(t, "GET", "/v1/operations/"+id+"/attempts", nil)
		items, _ = atts.Body["items"].([]any)
		if len(items) != 1 || str(items[0].(map[string]any), "began_at") == "" || str(items[0].(map[string]any), "outcome") != "lease_expired" {
			t.Fatalf("%s: attempts %s", id, atts.Raw)
		}
	}
}

// TestFaults_BegunClaimWorker is the worker TestFaults_WorkerKilledAfterBegunClaim
// runs as a separate process: it registers two operations with claims that
// begin at once, says so, and would call the providers next; run directly,
// it does nothing.
func TestFaults_BegunClaimWorker(t *testing.T) {
	url, token, ok := strings.Cut(os.Getenv("HANDOFF_E2E_BEGUN_WORKER"), " ")
	if !ok {
		return
	}
	s := &server{URL: url, Token: token}
	claim := func(key, typ string) response {
		r := s.do(t, "POST", "/v1/operations", map[string]any{"key": key, "type": typ, "content": map[string]any{"to": "a"},
			"claim": map[string]any{"worker": "w1", "lease_seconds": 1, "begin": true}})
		if r.Status != 201 || str(r.Body, "state") != "action_pending" {
			t.Fatalf("register %s: %d %s", key, r.Status, r.Raw)
		}
		return r
	}
	desk, resent := claim("begun-desk", "crm.task.create"), claim("begun-resent", "email.send")
	fmt.Printf("claimed %s %s %s\n", str(desk.Body, "id"), str(resent.Body, "id"), str(resent.Body, "claim", "provider_key"))
	time.Sleep(time.Minute) // about to call the providers: killed here
}
