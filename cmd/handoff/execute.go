package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/execute"
	"github.com/opshandoff/handoff/reconcile"
)

// executeAllowPrivate reads HANDOFF_EXECUTE_ALLOW_PRIVATE: execute
// adapters' calls may reach private and loopback addresses (a provider
// inside the network, or the sandbox); refused by default, as lookups are.
func executeAllowPrivate(getenv func(string) string) (bool, error) {
	switch v := getenv("HANDOFF_EXECUTE_ALLOW_PRIVATE"); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, fmt.Errorf("HANDOFF_EXECUTE_ALLOW_PRIVATE: %q must be true or false", v)
	}
}

// replicaName is the worker name this replica's calls are leased under.
func replicaName() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("handoff@%s:%d", host, os.Getpid())
}

// newExecutor builds the replica's executor; nil when no card has an
// execute_adapter.
func newExecutor(ledger *domain.Ledger) (*execute.Executor, error) {
	if len(ledger.Cards.ExecuteTypes()) == 0 {
		return nil, nil
	}
	allow, err := executeAllowPrivate(os.Getenv)
	if err != nil {
		return nil, err
	}
	return &execute.Executor{Workflow: ledger.Workflow, Caller: execute.NewCaller(allow, os.Getenv), Worker: replicaName(),
		Log: slog.Default()}, nil
}

// startRetries runs Handoff's own retries of execute adapters' calls.
func startRetries(ctx context.Context, loops *sync.WaitGroup, ledger *domain.Ledger, x *execute.Executor) {
	if x == nil {
		return
	}
	r := &reconcile.Retrier{Upkeep: ledger.Upkeep, Executor: x, Types: ledger.Cards.ExecuteTypes()}
	loops.Go(func() { r.Run(ctx) })
}

// executeCmd sends one POST /v1/execute/TYPE to a running Handoff, as a
// workflow tool would, and prints the answer: `handoff execute TYPE KEY`.
func executeCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	a, err := parseExecuteArgs(cfg, args)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	req, err := a.request(ctx)
	if err != nil {
		return fmt.Errorf("execute: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("execute: %w", err)
	}
	defer resp.Body.Close()
	printAnswer(resp, stdout)
	if resp.StatusCode >= 300 && resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("execute: %s", resp.Status)
	}
	return nil
}

// executeArgs are `handoff execute`'s type, key and flags.
type executeArgs struct {
	typ, key, base, token, content string
	async                          bool
}

// parseExecuteArgs reads `handoff execute TYPE KEY [flags]`.
func parseExecuteArgs(cfg config, args []string) (executeArgs, error) {
	var a executeArgs
	fs := flag.NewFlagSet("execute", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&a.base, "url", "http://"+cfg.Addr, "the running Handoff")
	fs.StringVar(&a.token, "token", os.Getenv("HANDOFF_API_TOKEN"), "a workflow token (default $HANDOFF_API_TOKEN)")
	fs.StringVar(&a.content, "content", "{}", "the content, a JSON object")
	fs.BoolVar(&a.async, "async", false, "ask for Prefer: respond-async: answered 202 at once")
	if len(args) < 2 || strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[1], "-") {
		return a, fmt.Errorf("usage: handoff execute TYPE KEY [--content JSON] [--url URL] [--token TOKEN] [--async]")
	}
	a.typ, a.key = args[0], args[1]
	if err := fs.Parse(args[2:]); err != nil {
		return a, fmt.Errorf("execute: %w", err)
	}
	var obj map[string]any
	if json.Unmarshal([]byte(a.content), &obj) != nil {
		return a, fmt.Errorf("execute: --content is not a JSON object")
	}
	if a.token == "" {
		return a, fmt.Errorf("execute: a workflow token is required: --token or HANDOFF_API_TOKEN")
	}
	return a, nil
}

// request is the POST /v1/execute/TYPE the arguments ask for.
func (a executeArgs) request(ctx context.Context) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		strings.TrimSuffix(a.base, "/")+"/v1/execute/"+url.PathEscape(a.typ), bytes.NewReader([]byte(a.content)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+a.token)
	req.Header.Set("Idempotency-Key", a.key)
	if a.async {
		req.Header.Set("Prefer", "respond-async")
	}
	return req, nil
}

// printAnswer prints the answer's status, the headers a workflow reads,
// and its body (up to 1 MiB), indented when it is JSON.
func printAnswer(resp *http.Response, stdout io.Writer) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	fmt.Fprintf(stdout, "%s\n", resp.Status)
	for _, h := range []string{"Idempotent-Replayed", "Location", "Retry-After"} {
		if v := resp.Header.Get(h); v != "" {
			fmt.Fprintf(stdout, "%s: %s\n", h, v)
		}
	}
	var pretty bytes.Buffer
	if json.Indent(&pretty, body, "", "  ") == nil {
		body = pretty.Bytes()
	}
	fmt.Fprintf(stdout, "%s\n", body)
}
