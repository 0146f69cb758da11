package docs

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/cards"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/execute"
	"github.com/opshandoff/handoff/store/storetest"
)

// fence is a fenced code block: its language and its text.
var fence = regexp.MustCompile("(?s)```(\\w+)\n(.*?)```")

// oneToken authenticates one workflow token.
type oneToken struct{ token string }

func (o oneToken) Authenticate(_ context.Context, bearer string) (domain.Actor, error) {
	if bearer != o.token {
		return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "unknown token")
	}
	return domain.Actor{Kind: domain.ActorWorkflow, Name: "docs", Namespace: "default"}, nil
}

// TestExecuteDoc_blocksRun: every card in execute.md loads and passes
// `cards check`, its JSON parses, and its curl request, sent to a Handoff
// whose charge.create card points at a test provider, completes the
// charge — and a second run of it is a replay that calls nothing.
func TestExecuteDoc_blocksRun(t *testing.T) {
	b, err := os.ReadFile("execute.md")
	if err != nil {
		t.Fatal(err)
	}
	all := domain.Cards{}
	var curl []string
	for _, m := range fence.FindAllStringSubmatch(string(b), -1) {
		switch m[1] {
		case "yaml":
			p := filepath.Join(t.TempDir(), "card.yaml")
			if err := os.WriteFile(p, []byte(m[2]), 0o600); err != nil {
				t.Fatal(err)
			}
			cs, err := cards.Load(p)
			if err != nil {
				t.Fatalf("a card in execute.md does not load:\n%v", err)
			}
			for n, c := range cs {
				all[n] = c
			}
		case "json":
			if !json.Valid([]byte(m[2])) {
				t.Errorf("a JSON block in execute.md does not parse:\n%s", m[2])
			}
		case "sh":
			curl = append(curl, m[2])
		default:
			t.Errorf("a %s block in execute.md is run by no test", m[1])
		}
	}
	if len(all) != 3 || len(curl) != 1 {
		t.Fatalf("%d cards, %d shell blocks", len(all), len(curl))
	}

	var mu sync.Mutex
	var keys []string
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		keys = append(keys, r.Header.Get("Idempotency-Key"))
		mu.Unlock()
		if r.URL.Path != "/v1/charges" || r.Header.Get("Authorization") != "Bearer sk_docs" || !json.Valid(body) {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id": "ch_1", "amount": 1999}`))
	}))
	defer provider.Close()
	card := all["charge.create"]
	a := *card.ExecuteAdapter
	a.URL = strings.Replace(a.URL, "https://api.example.com", provider.URL, 1)
	card.ExecuteAdapter = &a
	all["charge.create"] = card
	ledger := domain.NewLedger(storetest.New(t), all)
	x := &execute.Executor{Workflow: ledger.Workflow, Worker: "docs", Caller: execute.NewCaller(true, func(k string) string {
		if k == "PROVIDER_TOKEN" {
			return "sk_docs"
		}
		return ""
	})}
	e, err := api.New(api.Config{Ledger: ledger, Auth: oneToken{"hk_docs_token"}, Executor: x, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e)
	defer srv.Close()
	run := func() map[string]any {
		cmd := exec.Command("bash", "-c", curl[0])
		cmd.Env = append(os.Environ(), "HANDOFF_URL="+srv.URL, "HANDOFF_TOKEN=hk_docs_token")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the curl request: %v", err)
		}
		var op map[string]any
		if err := json.Unmarshal(out, &op); err != nil {
			t.Fatalf("the curl request's answer: %s", out)
		}
		return op
	}
	first, second := run(), run()
	for _, op := range []map[string]any{first, second} {
		res, _ := op["result"].(map[string]any)
		if op["state"] != "completed" || op["key"] != "order_1042:charge" || res == nil || res["ref"] != "ch_1" {
			t.Fatalf("the curl request did not complete the charge: %v", op)
		}
	}
	if len(keys) != 1 || keys[0] != first["provider_key"] {
		t.Fatalf("the provider was called with keys %q; want the provider key once", keys)
	}
}

// TestExecuteDoc_theREADMEShowsTheRunRequest: the README's execute example
// (indented, so its own test does not run it) is this page's request,
// which TestExecuteDoc_blocksRun runs.
func TestExecuteDoc_theREADMEShowsTheRunRequest(t *testing.T) {
	page, err := os.ReadFile("execute.md")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := fence.FindStringSubmatch(string(page)[strings.Index(string(page), "```sh"):])
	if m == nil {
		t.Fatal("execute.md has no sh block")
	}
	var indented strings.Builder
	for _, line := range strings.Split(strings.TrimRight(m[2], "\n"), "\n") {
		indented.WriteString("    " + line + "\n")
	}
	if !strings.Contains(string(readme), indented.String()) {
		t.Fatalf("the README does not show execute.md's request as it is:\n%s", indented.String())
	}
}
