package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// subcommands are the subcommands the usage names, so that one added to
// the usage is covered here without touching this test.
func subcommands(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^  handoff \[?([a-z]+)`).FindAllStringSubmatch(usage, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			out = append(out, m[1])
		}
	}
	if len(out) < 8 {
		t.Fatalf("the usage names only %v", out)
	}
	return out
}

// TestHelp_EverySubcommandExitsWithoutSideEffects: `--help` prints the
// subcommand's usage and does nothing else — no database is created, no
// migration runs, no port is bound.
func TestHelp_EverySubcommandExitsWithoutSideEffects(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "help.db")
	t.Setenv("HANDOFF_DATABASE_URL", "sqlite://"+db)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	t.Setenv("HANDOFF_ADDR", taken.Addr().String()) // a server that started would fail to bind, loudly
	for _, cmd := range subcommands(t) {
		for _, args := range [][]string{{cmd, "--help"}, {cmd, "-h"}} {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Errorf("handoff %s: %v", strings.Join(args, " "), err)
			}
			if !strings.Contains(stdout.String(), "handoff") {
				t.Errorf("handoff %s printed %q, want its usage", strings.Join(args, " "), stdout.String())
			}
		}
	}
	for _, args := range [][]string{{"token", "create", "--help"}, {"audit", "verify", "--help"}, {"drill", "verify", "--help"}} {
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), args, &stdout, &stderr); err != nil {
			t.Errorf("handoff %s: %v", strings.Join(args, " "), err)
		}
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("asking for help created the database %s (stat: %v)", db, err)
	}
}

// TestTokenCreate_SaysWhichFlagsAreMissing: a bare `token create` names the
// flags it needs and creates no database.
func TestTokenCreate_SaysWhichFlagsAreMissing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "token.db")
	t.Setenv("HANDOFF_DATABASE_URL", "sqlite://"+db)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"token", "create"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "--namespace") || !strings.Contains(err.Error(), "--name") {
		t.Fatalf("token create without flags: %v, want the missing flags named", err)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Fatalf("a refused token create created the database")
	}
}

// syncBuffer is a log sink the server writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestServe_LogsTheBoundPort: HANDOFF_ADDR=127.0.0.1:0 logs the port the
// server got, and that port answers.
func TestServe_LogsTheBoundPort(t *testing.T) {
	t.Setenv("HANDOFF_DATABASE_URL", "sqlite://"+filepath.Join(t.TempDir(), "serve.db"))
	t.Setenv("HANDOFF_ADDR", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, &bytes.Buffer{}, logs) }()
	defer func() { cancel(); <-done }()
	served := regexp.MustCompile(`handoff serving.*addr=http://(127\.0\.0\.1:(\d+))`)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if m := served.FindStringSubmatch(logs.String()); m != nil {
			if m[2] == "0" {
				t.Fatalf("logged port 0: %s", m[0])
			}
			resp, err := http.Get("http://" + m[1] + "/healthz")
			if err != nil {
				t.Fatalf("the logged address does not answer: %v", err)
			}
			resp.Body.Close()
			if strings.Contains(logs.String(), ":0/desk") {
				t.Fatalf("the desk URL names port 0:\n%s", logs)
			}
			return
		}
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v\n%s", err, logs)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("no serving line:\n%s", logs)
}

// TestServe_TakenPortFailsBeforeServing: a port already in use ends serve
// with an error naming HANDOFF_ADDR, and nothing claims to be serving.
func TestServe_TakenPortFailsBeforeServing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	t.Setenv("HANDOFF_DATABASE_URL", "sqlite://"+filepath.Join(t.TempDir(), "taken.db"))
	t.Setenv("HANDOFF_ADDR", ln.Addr().String())
	logs := &syncBuffer{}
	err = run(context.Background(), []string{"serve"}, &bytes.Buffer{}, logs)
	if err == nil || !strings.Contains(err.Error(), "HANDOFF_ADDR") {
		t.Fatalf("serve on a taken port: %v, want an error naming HANDOFF_ADDR", err)
	}
	if strings.Contains(logs.String(), "handoff serving") {
		t.Fatalf("logged serving before the bind failed:\n%s", logs)
	}
}

// TestAuditVerify_aNamespaceExportVerifiesWhole: an export of one
// namespace carries whole streams (its operations' and the system's), so it
// verifies as it is, without --partial, and holds no other namespace's
// events. (A time-filtered export starts mid-stream: that one is --partial.)
func TestAuditVerify_aNamespaceExportVerifiesWhole(t *testing.T) {
	ctx := context.Background()
	dbURL := storetest.URL(t)
	t.Setenv("HANDOFF_DATABASE_URL", dbURL)
	s, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cs := exampleCards(t)
	if _, err := s.SyncCards(ctx, cs); err != nil {
		t.Fatal(err)
	}
	l := domain.NewLedger(s, cs)
	for _, ns := range []string{"campaigns", "billing"} {
		wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: ns}
		for _, key := range []string{"evt_1:crm", "evt_2:crm"} {
			res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
				Content: json.RawMessage(`{"title":"` + key + `"}`), Claim: &domain.Claim{Worker: "w", Begin: true}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := l.Workflow.Settle(ctx, wf, res.Operation.ID, domain.Settle{LeaseToken: res.Claim.Lease.Token,
				Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "r"}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	file := filepath.Join(dir, "campaigns.jsonl")
	if err := run(ctx, []string{"audit", "export", "--namespace", "campaigns", "-o", file}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := run(ctx, []string{"audit", "verify", file}, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "ok") {
		t.Fatalf("a namespace export does not verify as it is: %v\n%s", err, out.String())
	}
	b, _ := os.ReadFile(file)
	if strings.Contains(string(b), `"namespace":"billing"`) {
		t.Fatalf("the campaigns export holds billing's events")
	}
}

// TestMCP_HTTPServesOnlyLoopback: `handoff mcp --http` carries no
// authentication of its own, so an address other machines can reach is
// refused before the configuration is even read.
func TestMCP_HTTPServesOnlyLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8765", ":8765", "192.0.2.7:8765", "[::]:8765"} {
		err := run(context.Background(), []string{"mcp", "--http", addr, "/nonexistent/mcp.yaml"}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "loopback") {
			t.Errorf("mcp --http %s: %v, want a refusal naming loopback", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:0", "[::1]:0"} {
		err := run(context.Background(), []string{"mcp", "--http", addr, "/nonexistent/mcp.yaml"}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || strings.Contains(err.Error(), "loopback") {
			t.Errorf("mcp --http %s: %v, want it to get as far as reading the file", addr, err)
		}
	}
}
