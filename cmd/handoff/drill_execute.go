package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/execute"
	"github.com/opshandoff/handoff/reconcile"
)

// The embedded Handoff makes, itself, the calls of the types whose cards
// have an execute_adapter — against the drill's sandbox, never the real
// provider: each such adapter is replaced by one in the sandbox's shape
// (POST /execute {"key": provider key, "params": content}), with the
// card's statuses, through a loopback router like the lookups'.

// drillExecuteTimeout bounds the embedded Handoff's calls: a lost answer
// costs this much.
const drillExecuteTimeout = 2 * time.Second

// drillExecuteCards gives each card with an execute_adapter the
// sandbox-shaped one, routed by drillLookups' router under /execute/.
func drillExecuteCards(cards domain.Cards, router *drillLookups) (domain.Cards, map[string]bool, []string, error) {
	types := map[string]bool{}
	out := domain.Cards{}
	for name, c := range cards {
		out[name] = c
		if c.ExecuteAdapter != nil {
			types[name] = true
		}
	}
	if len(types) == 0 {
		return out, types, nil, nil
	}
	if err := router.listen(); err != nil {
		return nil, nil, nil, err
	}
	for name := range types {
		c := out[name]
		a := *c.ExecuteAdapter
		c.ExecuteAdapter = &domain.ExecuteAdapter{Method: "POST", URL: router.base + "/" + url.PathEscape(name) + "/execute",
			Body: domain.ExecuteBodyTemplate, Template: json.RawMessage(`{"key": "{provider_key}", "params": "{content}"}`),
			Timeout: min(a.RequestTimeout(), drillExecuteTimeout), CompletedStatus: []int{200}, CompletedRef: "/ref",
			TerminalStatus: a.TerminalStatus, RetryableStatus: a.RetryableStatus}
		c.ExecuteEndpoint = nil // the drill sends the key in Idempotency-Key, with its token
		out[name] = c
	}
	note := fmt.Sprintf("embedded Handoff makes the calls of the types with an execute_adapter itself, against the sandbox "+
		"(POST /execute in the sandbox's shape, the card's failed_terminal and failed_retryable statuses, timeout at most %s, "+
		"no auth header): the card's own request is never sent", drillExecuteTimeout)
	return out, types, []string{note}, nil
}

// startDrillExecutor serves the embedded Handoff's calls and its own
// retries until ctx ends.
func startDrillExecutor(ctx context.Context, ledger *domain.Ledger) *execute.Executor {
	types := ledger.Cards.ExecuteTypes()
	if len(types) == 0 {
		return nil
	}
	x := &execute.Executor{Workflow: ledger.Workflow, Caller: execute.NewCaller(true, nil), Worker: "handoff-drill", Log: quiet}
	go (&reconcile.Retrier{Upkeep: ledger.Upkeep, Executor: x, Types: types, Interval: 100 * time.Millisecond, Log: quiet}).Run(ctx)
	return x
}

// listen starts the router once, for lookups or calls.
func (dl *drillLookups) listen() error {
	if dl.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	dl.base, dl.ln = "http://"+ln.Addr().String(), ln
	go func() { _ = http.Serve(ln, dl) }()
	return nil
}
