package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
)

// TestAccessLog_oneLinePerCall: a call that writes a change is one log
// line, the access log's, carrying what issue 23 asks of a ledger line —
// the key, the event, the state before and after, the attempt; a call that
// writes several gets the first in its line and each further one as a
// "ledger" line of its own, so no change goes unlogged.
func TestAccessLog_oneLinePerCall(t *testing.T) {
	x := newHarness(t)
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	ledger := domain.NewLedger(x.store, contractCards())
	ledger.Log = log
	h, err := api.New(api.Config{Ledger: ledger, Auth: auth.Chain{Tokens: x.tokens}, Ready: x.store.Ping, Logger: log,
		BodyLimit: 256 << 10, Registry: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	x.h = h
	lines := func() []map[string]any {
		t.Helper()
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			out = append(out, m)
		}
		buf.Reset()
		return out
	}

	op := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "evt_42:charge", "event_id": "evt_42", "correlation_id": "run-7",
		"type": "crm.task.create", "content": map[string]any{"n": 1}, "claim": map[string]any{"worker": "w-1", "begin": true}}).ok(201)
	got := lines()
	if len(got) != 1 {
		t.Fatalf("%d log lines for one call: %v", len(got), got)
	}
	l := got[0]
	if l["msg"] != "request" || l["route"] != "/v1/operations" || l["status"] != 201.0 || l["key"] != "evt_42:charge" ||
		l["event_id"] != "evt_42" || l["state_before"] != "" || l["state_after"] != "action_pending" || l["attempt"] != 1.0 ||
		l["operation_id"] != op["id"] || l["actor"] != "n8n" || l["request_id"] == "" || l["correlation_id"] != "run-7" || l["result_ref"] != "" {
		t.Fatalf("register's line: %v", l)
	}
	if acts, _ := l["actions"].([]any); len(acts) == 0 {
		t.Fatalf("register's line names no actions: %v", l)
	}

	x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": op["claim"].(map[string]any)["lease"].(map[string]any)["token"],
		"outcome": "completed", "result": map[string]any{"ref": "crm_1"}}).ok(200)
	if got := lines(); len(got) != 1 || got[0]["state_before"] != "action_pending" || got[0]["state_after"] != "completed" ||
		got[0]["key"] != "evt_42:charge" || got[0]["correlation_id"] != "run-7" || got[0]["result_ref"] != "crm_1" {
		t.Fatalf("settle's lines: %v", got)
	}

	// A read writes nothing: its line has no change fields.
	x.do("GET", opPath(op, ""), x.tok, nil).ok(200)
	if got := lines(); len(got) != 1 || got[0]["key"] != nil {
		t.Fatalf("a read's lines: %v", got)
	}

	// Two claims in one call: the first in the access log, the second a line of its own.
	x.register("p1", "crm.task.create", nil)
	x.register("p2", "crm.task.create", nil)
	lines()
	x.do("POST", "/v1/claims", x.tok, map[string]any{"worker": "w-2", "limit": 2}).ok(200)
	got = lines()
	var keys []string
	var access, ledgerLines int
	for _, l := range got {
		switch l["msg"] {
		case "request":
			access++
		case "ledger":
			ledgerLines++
		}
		if k, ok := l["key"].(string); ok {
			keys = append(keys, k)
		}
	}
	if access != 1 || ledgerLines != 1 || len(keys) != 2 || keys[0] == keys[1] {
		t.Fatalf("a call claiming two: %v", got)
	}
}
