package api_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
)

// TestContract_ContentVisibleTo: a card with content_visible_to: operator
// shows a viewer the content's hash and size, not the content or the result
// data; an operator and the workflow see it all.
func TestContract_ContentVisibleTo(t *testing.T) {
	x := newHarness(t)
	cards := contractCards()
	crm := cards["crm.task.create"]
	crm.ContentVisibleTo = domain.RoleOperator
	cards[crm.Name] = crm
	e, err := api.New(api.Config{Ledger: domain.NewLedger(x.store, cards), Logger: slog.New(slog.DiscardHandler),
		Registry: prometheus.NewRegistry(), Auth: auth.Chain{Tokens: x.tokens, People: people{
			"alice": person("alice@example.com", domain.RoleOperator), "vera": person("vera@example.com", domain.RoleViewer)}}})
	if err != nil {
		t.Fatal(err)
	}
	x.h = e
	r := x.do("POST", "/v1/events", x.tok, map[string]any{"event_id": "ev-private", "actions": []any{
		map[string]any{"action": "task", "type": "crm.task.create", "content": map[string]any{"email": "ada@example.com"}}}})
	ev := r.ok(201)
	op := ev["operations"].([]any)[0].(map[string]any)

	for who, sees := range map[string]bool{"alice": true, "vera": false, x.tok: true} {
		got := x.do("GET", opPath(op, ""), who, nil).ok(200)
		_, hasContent := got["content"]
		if hasContent != sees || (got["content_hidden"] == true) == sees || got["content_sha256"] != op["content_sha256"] {
			t.Errorf("%s: GET one %v", who, got)
		}
		if !sees && got["content_bytes"] != float64(len(`{"email":"ada@example.com"}`)) {
			t.Errorf("%s: content_bytes %v", who, got["content_bytes"])
		}
	}
	// The list's search never matches the content: not for the viewer,
	// who may not read it, and through the key for everyone.
	for who, q := range map[string]string{"vera": "ada%40example", "alice": "ada%40example", x.tok: "ada%40example"} {
		if items := x.do("GET", "/v1/operations?q="+q, who, nil).ok(200)["items"].([]any); len(items) != 0 {
			t.Errorf("%s: the search matches the content: %v", who, items)
		}
		if items := x.do("GET", "/v1/operations?q=task", who, nil).ok(200)["items"].([]any); len(items) != 1 {
			t.Errorf("%s: the search by key finds %d operations", who, len(items))
		}
	}
	for _, path := range []string{"/v1/events/ev-private", opPath(op, "timeline"), "/v1/operations?event_id=ev-private"} {
		if raw := string(x.do("GET", path, "vera", nil).raw); strings.Contains(raw, "ada@example.com") {
			t.Errorf("vera reads the content at %s: %s", path, raw)
		}
	}
}
