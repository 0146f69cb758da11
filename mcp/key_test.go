package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func args(t *testing.T, s string) arguments {
	t.Helper()
	a, err := parseArguments(json.RawMessage(s))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestDeriveKey_HashesNamedArguments(t *testing.T) {
	tc := &ToolConfig{Name: "send_email", Key: KeyConfig{From: []string{"to", "campaign"}}}
	k1, err := deriveKey("mailer", tc, args(t, `{"to":"ann@example.com","campaign":{"id":7,"wave":2},"body":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(k1, "ann") || strings.Contains(k1, "example") || !strings.HasPrefix(k1, "mcp.mailer.send_email:") {
		t.Fatalf("the key must be a hash, not the raw values: %s", k1)
	}
	same, _ := deriveKey("mailer", tc, args(t, `{ "campaign": {"wave":2, "id":7}, "body":"other text", "to":"ann@example.com"}`))
	if same != k1 {
		t.Fatalf("order, spacing and non-key arguments changed the key: %s vs %s", same, k1)
	}
	other, _ := deriveKey("mailer", tc, args(t, `{"to":"bob@example.com","campaign":{"id":7,"wave":2}}`))
	elsewhere, _ := deriveKey("crm", tc, args(t, `{"to":"ann@example.com","campaign":{"id":7,"wave":2}}`))
	if other == k1 || elsewhere == k1 {
		t.Fatal("other key arguments, or another upstream, gave the same key")
	}
	// Argument names are part of what is hashed: {"a":"1","b":""} is not {"a":"","b":"1"}.
	ab := &ToolConfig{Name: "t", Key: KeyConfig{From: []string{"a", "b"}}}
	x, _ := deriveKey("u", ab, args(t, `{"a":"1","b":""}`))
	y, _ := deriveKey("u", ab, args(t, `{"a":"","b":"1"}`))
	if x == y {
		t.Fatal("moving a value between key arguments kept the key")
	}
}

func TestDeriveKey_IdempotencyKeyArgument(t *testing.T) {
	tc := &ToolConfig{Name: "create_task", Key: KeyConfig{Argument: "request_id"}}
	if _, err := deriveKey("crm", tc, args(t, `{"title":"x"}`)); err == nil || !strings.Contains(err.Error(), "request_id") {
		t.Fatalf("a missing idempotency key: %v", err)
	}
	k, err := deriveKey("crm", tc, args(t, `{"request_id":"+44 20 7946 0958","title":"x"}`))
	if err != nil || strings.Contains(k, "7946") {
		t.Fatalf("the key must hash the idempotency-key argument: %s %v", k, err)
	}
}

func TestUpstreamArguments_SnapshotWins(t *testing.T) {
	tc := &ToolConfig{Name: "payout", Key: KeyConfig{Argument: "request_id"}, Content: []string{"amount", "to"}}
	a := args(t, `{"request_id":"r1","amount":250,"to":"cus_9","note":"now"}`)
	snap := map[string]json.RawMessage{"amount": json.RawMessage(`100`), "to": json.RawMessage(`"cus_9"`)}
	got, _ := json.Marshal(upstreamArguments(tc, a, snap, true))
	if string(got) != `{"amount":100,"note":"now","to":"cus_9"}` {
		t.Fatalf("upstream arguments: %s", got)
	}
	if d := differs(tc, content(tc, a), snap); len(d) != 1 || d[0] != "amount" {
		t.Fatalf("differs: %v", d)
	}
	if d := differs(tc, map[string]json.RawMessage{"amount": json.RawMessage(`100.0`), "to": json.RawMessage(` "cus_9"`)}, snap); len(d) != 0 {
		t.Fatalf("equal values reported as different: %v", d)
	}
}

func TestMayPass(t *testing.T) {
	no, yes := false, true
	for name, c := range map[string]struct {
		a    *sdk.ToolAnnotations
		pass bool
	}{
		"no_annotations":      {nil, false},
		"silent":              {&sdk.ToolAnnotations{Title: "x"}, false},
		"destructive":         {&sdk.ToolAnnotations{DestructiveHint: &yes}, false},
		"read_only":           {&sdk.ToolAnnotations{ReadOnlyHint: true}, true},
		"additive_only":       {&sdk.ToolAnnotations{DestructiveHint: &no}, true},
		"idempotent_but_says": {&sdk.ToolAnnotations{IdempotentHint: true, DestructiveHint: &yes}, false},
	} {
		if got := mayPass(&sdk.Tool{Name: name, Annotations: c.a}); got != c.pass {
			t.Errorf("%s: mayPass = %v, want %v", name, got, c.pass)
		}
	}
}

func TestStored_CutsLargeResults(t *testing.T) {
	small := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}, StructuredContent: map[string]any{"id": "t_1"}}
	data, ref := stored(small)
	var s storedResult
	if err := json.Unmarshal(data, &s); err != nil || s.Truncated || !strings.Contains(string(s.Result), `"t_1"`) || !strings.HasPrefix(ref, "mcp-result:") {
		t.Fatalf("a small result is stored whole: %s %s %v", data, ref, err)
	}
	big := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("é", maxStoredResult)}}}
	data, _ = stored(big)
	if err := json.Unmarshal(data, &s); err != nil || !s.Truncated || len(data) > maxStoredResult {
		t.Fatalf("a large result is cut below %d bytes: %d bytes, truncated %v, %v", maxStoredResult, len(data), s.Truncated, err)
	}
}
