package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestServeWithNoConfiguration is the README's run command (and the tutorial's): no database URL,
// no cards — SQLite in ./handoff.db, the bundled example types, and a hint
// on how to get a token. Only the port is chosen, so the test cannot collide
// with a server already on 8080.
func TestServeWithNoConfiguration(t *testing.T) {
	bin := handoffBinary(t)
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HANDOFF_") {
			env = append(env, kv)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	// The port is the server's own choice, read back from its log: a port
	// picked here and freed could be taken by another test's server first,
	// which would then answer this test's readiness check.
	cmd.Dir, cmd.Env = dir, append(env, "HANDOFF_ADDR=127.0.0.1:0")
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = cmd.Wait() }()

	var addr string
	serving := regexp.MustCompile(`msg="handoff serving".* addr=http://(127\.0\.0\.1:\d+)`)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if m := serving.FindStringSubmatch(logs.String()); m != nil {
			addr = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not serving:\n%s", logs.String())
		}
	}
	var resp *http.Response
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err = http.Get("http://" + addr + "/readyz"); err == nil && resp.StatusCode == 200 {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready: %v\n%s", err, logs.String())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "handoff.db")); err != nil {
		t.Errorf("the default database ./handoff.db was not created: %v", err)
	}
	if !strings.Contains(logs.String(), "handoff token create --namespace") {
		t.Errorf("the first start should say how to get a token:\n%s", logs.String())
	}

	// A token made with the same defaults works against the running server.
	tok := exec.Command(bin, "token", "create", "--namespace", "default", "--name", "readme")
	tok.Dir, tok.Env = dir, env
	out, err := tok.Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	s := &server{URL: "http://" + addr, Token: lines[len(lines)-1]}
	types := s.do(t, "GET", "/v1/operation-types/crm.task.create", nil)
	if types.Status != 200 {
		t.Fatalf("the bundled example types are not served: %d %s", types.Status, types.Raw)
	}
}
