package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMCP_RewordedTwinIsHeld: the agent's first charge of an order times
// out (its outcome unknown); it calls again under a new request ID with the
// memo reworded. The card's identity is the customer and the amount, so
// the second call is the same order: held for a person (awaiting_approval,
// twin_unresolved) and never sent to the upstream.
func TestMCP_RewordedTwinIsHeld(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	file := filepath.Join(t.TempDir(), "mcp.yaml")
	cfg := fmt.Sprintf(`handoff: {url: %q, token_env: HANDOFF_MCP_TOKEN}
upstreams:
  - name: billing
    url: %q
    tools:
      - {name: charge, type: billing.order, key: {argument: request_id}, content: [customer, amount, memo], timeout: 1s}
`, d.URL, url+"/")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	a := d.startAgent(t, file)

	b.setHang(true)
	first := a.call(t, "charge", map[string]any{"request_id": "req-1", "customer": "cus_8", "amount": 70, "memo": "order 2026-12 for the team"})
	b.setHang(false)
	id := fmt.Sprint(handoffMeta(first)["operation"])
	d.waitState(t, id, "unknown_outcome")

	second := a.call(t, "charge", map[string]any{"request_id": "req-2", "customer": "cus_8", "amount": 70, "memo": "December order, team"})
	m := handoffMeta(second)
	if !second.IsError || m["state"] != "awaiting_approval" || m["operation"] == id {
		t.Fatalf("the reworded call under a new request ID: %s %v", resultText(second), m)
	}
	held := d.operation(t, fmt.Sprint(m["operation"]))
	if str(held, "state") != "awaiting_approval" || str(held, "last_error", "code") != "twin_unresolved" || b.count("charge") != 1 {
		t.Fatalf("held: %s %s, executions %d", str(held, "state"), str(held, "last_error", "code"), b.count("charge"))
	}
}
