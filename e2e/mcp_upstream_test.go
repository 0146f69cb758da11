package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCP_UpstreamRestartedWhileIdle: the upstream restarts between two
// calls, so the proxy's session is gone (HTTP 404, which MCP defines as not
// processed). The next guarded call was never sent under the old session:
// it reaches the restarted upstream once and completes, and nothing is
// handed to a person.
func TestMCP_UpstreamRestartedWhileIdle(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	a := d.startAgent(t, d.billingConfig(t, url))
	if r := a.call(t, "charge", map[string]any{"customer": "cus_1", "amount": 1, "memo": "before"}); r.IsError {
		t.Fatalf("the first call: %s", resultText(r))
	}
	b.restart(t)
	after := a.call(t, "charge", map[string]any{"customer": "cus_1", "amount": 2, "memo": "after"})
	if m := handoffMeta(after); after.IsError || m["state"] != "completed" || b.count("charge") != 2 {
		t.Fatalf("the call after the upstream restarted: %s %v, executions %d", resultText(after), m, b.count("charge"))
	}
	if read := a.call(t, "get_customer", map[string]any{"customer": "cus_1"}); read.IsError {
		t.Fatalf("a passed-through call after the restart: %s", resultText(read))
	}
}

// TestMCP_OversizedArgumentsAnsweredNotFatal: an argument nested deeper than
// the ledger takes, and a call larger than it takes, each get an error
// result for that call; the proxy keeps serving the next one.
func TestMCP_OversizedArgumentsAnsweredNotFatal(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	a := d.startAgent(t, d.billingConfig(t, url))
	var deep any = "bottom"
	for range 1001 {
		deep = []any{deep}
	}
	for name, memo := range map[string]any{"deep": deep, "large": strings.Repeat("x", 2<<20)} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := a.sess.CallTool(ctx, &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{"customer": "cus_9", "amount": 1, "memo": memo}})
		cancel()
		if err != nil {
			t.Fatalf("%s: the proxy failed the request instead of answering it: %v", name, err)
		}
		if !res.IsError || b.count("charge") != 0 {
			t.Fatalf("%s: %s, executions %d", name, resultText(res), b.count("charge"))
		}
	}
	if next := a.call(t, "charge", map[string]any{"customer": "cus_9", "amount": 1, "memo": "plain"}); next.IsError || b.count("charge") != 1 {
		t.Fatalf("the next call: %s, executions %d", resultText(next), b.count("charge"))
	}
}

// TestMCP_PassedThroughToolTimesOut: a passed-through tool that hangs is
// answered within the upstream's pass timeout, and the proxy keeps serving.
func TestMCP_PassedThroughToolTimesOut(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	cfg := strings.Replace(readFile(t, d.billingConfig(t, url)), "    tools:\n", "    pass_timeout: 1s\n    tools:\n", 1)
	a := d.startAgent(t, writeTemp(t, cfg))
	b.setHang(true)
	start := time.Now()
	res := a.call(t, "get_customer", map[string]any{"customer": "cus_1"})
	took := time.Since(start)
	b.setHang(false)
	if !res.IsError || !strings.Contains(resultText(res), "did not answer within 1s") {
		t.Fatalf("a hanging passed-through tool after %s: %s", took, resultText(res))
	}
	if read := a.call(t, "get_customer", map[string]any{"customer": "cus_2"}); read.IsError {
		t.Fatalf("the next call: %s", resultText(read))
	}
}

func readFile(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeTemp(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "mcp.yaml")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
