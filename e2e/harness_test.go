// Package e2e tests Handoff from the outside: it builds the real binary,
// starts it against a fresh database (SQLite, or PostgreSQL when
// HANDOFF_TEST_POSTGRES is set) and speaks the wire contract over HTTP.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/store/storetest"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// handoffBinary builds cmd/handoff once per test run, or uses the one
// HANDOFF_BIN names (scripts/test builds one for every package's tests).
func handoffBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if bin := os.Getenv("HANDOFF_BIN"); bin != "" {
			binary = bin
			return
		}
		dir, err := os.MkdirTemp("", "handoff-e2e")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "handoff")
		// Built as the Dockerfile builds it, so its test shares the build.
		cmd := exec.Command("go", "build", "-trimpath", "-o", binary, "../cmd/handoff")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binary
}

// databaseURL gives each server a fresh, migrated database; the PgBouncer
// test replaces it to run tests through PgBouncer. The tests that start
// processes on storetest.URL's empty database (the replicas, faults,
// shutdown and compose tests) see the binary migrate it.
var databaseURL = storetest.MigratedURL

// server is a running handoff process and a workflow token for it.
type server struct {
	URL   string
	Token string
	env   []string
	bin   string
	logs  *syncBuffer // what the process has written so far
	pid   int         // the serve process
}

// startServer runs `handoff serve` on a fresh database and waits until it
// is ready; extra are additional HANDOFF_* variables.
func startServer(t testing.TB, extra ...string) *server {
	t.Helper()
	bin := handoffBinary(t)
	addr := freeAddr(t, "127.0.0.1")
	env := append(os.Environ(), "HANDOFF_DATABASE_URL="+databaseURL(t), "HANDOFF_ADDR="+addr,
		"HANDOFF_CARDS=testdata/cards.yaml", "HANDOFF_SWEEP_INTERVAL=100ms")
	env = append(env, extra...)
	s := &server{URL: "http://" + addr, env: env, bin: bin}
	s.Token = s.createToken(t, "campaigns", "e2e")

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve")
	cmd.Env = env
	logs := &syncBuffer{}
	s.logs = logs
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.pid = cmd.Process.Pid
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		resp, err := http.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not become ready: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// createToken runs `handoff token create` and returns the secret from its
// last line of output.
func (s *server) createToken(t testing.TB, namespace, name string) string {
	t.Helper()
	cmd := exec.Command(s.bin, "token", "create", "--namespace", namespace, "--name", name)
	cmd.Env = s.env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// response is a decoded HTTP answer.
type response struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

var httpClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}, Timeout: 30 * time.Second}

// call sends body (marshalled unless it is a string) with the token.
func (s *server) call(t testing.TB, token, method, path string, body any) response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, s.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return response{}
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	_ = json.Unmarshal(raw, &r.Body)
	return r
}

// do is call with the server's own token.
func (s *server) do(t testing.TB, method, path string, body any) response {
	return s.call(t, s.Token, method, path, body)
}

// str digs a string out of a decoded body: str(b, "claim", "lease", "worker").
func str(m map[string]any, path ...string) string {
	v := dig(m, path...)
	if s, ok := v.(string); ok {
		return s
	}
	return ""
}

func num(m map[string]any, path ...string) int64 {
	if f, ok := dig(m, path...).(float64); ok {
		return int64(f)
	}
	return -1
}

func dig(m map[string]any, path ...string) any {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}

// syncBuffer is a bytes.Buffer a child process may write to while the test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// drillReceipt runs `handoff drill` for typ, as an operator would before
// production: an embedded Handoff on a throwaway database, its receipt and
// audit event recorded in s's database. It returns the receipt's ID.
func (s *server) drillReceipt(t testing.TB, typ string) string {
	t.Helper()
	cmd := exec.Command(s.bin, "drill", "--type", typ, "--receipts", t.TempDir())
	cmd.Env = s.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("drill %s: %v\n%s", typ, err, out)
	}
	m := regexp.MustCompile(`PASS \S+ .*receipt \S*(drl_[0-9a-f]+)\.json`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("drill %s named no receipt:\n%s", typ, out)
	}
	return string(m[1])
}
