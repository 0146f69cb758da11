package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCP_TimeoutLandsOnTheDesk: an upstream that does the work and then
// hangs past the tool's timeout leaves an unknown outcome on the desk; the
// agent's retry does not execute again; a person's "confirm executed" makes
// the next call return that result.
func TestMCP_TimeoutLandsOnTheDesk(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	a := d.startAgent(t, d.billingConfig(t, url))
	args := map[string]any{"customer": "cus_7", "amount": 40, "memo": "invoice 2026-11"}

	b.setHang(true)
	first := a.call(t, "charge", args)
	b.setHang(false)
	m := handoffMeta(first)
	if !first.IsError || m["state"] != "unknown_outcome" || !strings.Contains(resultText(first), "Do NOT retry this under a new key") ||
		!strings.Contains(resultText(first), d.URL+"/desk/operations/"+fmt.Sprint(m["operation"])) {
		t.Fatalf("a timed-out call should be an error result handing it to a person, with the desk URL: %s %v", resultText(first), m)
	}
	id := fmt.Sprint(m["operation"])
	if strings.Contains(fmt.Sprint(m["key"]), "cus_7") || strings.Contains(fmt.Sprint(m["key"]), "invoice") {
		t.Fatalf("the key carries raw argument values: %v", m["key"])
	}
	op := d.operation(t, id)
	if str(op, "state") != "unknown_outcome" || b.count("charge") != 1 {
		t.Fatalf("after the timeout: state %s, executions %d", str(op, "state"), b.count("charge"))
	}

	again := a.call(t, "charge", args)
	if !again.IsError || handoffMeta(again)["state"] != "unknown_outcome" || b.count("charge") != 1 {
		t.Fatalf("the retry: %s, executions %d", resultText(again), b.count("charge"))
	}

	// The timeline names the agent and the upstream tool.
	tl := d.call(t, d.mcpToken, "GET", "/v1/operations/"+id+"/timeline", nil)
	if !strings.Contains(string(tl.Raw), `"worker":"mcp e2e-agent/1.0 via billing/charge"`) {
		t.Fatalf("the timeline does not name the MCP client and tool: %s", tl.Raw)
	}

	confirm := d.call(t, d.idp.IDToken(t, d.operator), "POST", "/v1/operations/"+id+"/resolve", map[string]any{
		"action": "confirm_executed", "reason": "the charge is in the billing console", "expected_version": num(op, "version"),
		"result": map[string]any{"ref": "ch_9001"}})
	if confirm.Status != 200 || str(confirm.Body, "state") != "completed" {
		t.Fatalf("confirm executed: %d %s", confirm.Status, confirm.Raw)
	}
	after := a.call(t, "charge", args)
	if after.IsError || handoffMeta(after)["replayed"] != true || !strings.Contains(resultText(after), "ch_9001") || b.count("charge") != 1 {
		t.Fatalf("after the person confirmed: %v %s %v, executions %d", after.IsError, resultText(after), handoffMeta(after), b.count("charge"))
	}
}

// TestMCP_KilledMidCall: `handoff mcp` killed with SIGKILL while the
// upstream works, and started again: the agent's retry does not execute a
// second time — first it hears the call is still running, then that a
// person reconciles it.
func TestMCP_KilledMidCall(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	cfg := d.billingConfig(t, url)
	a := d.startAgent(t, cfg)
	args := map[string]any{"customer": "cus_8", "amount": 15, "memo": "refund 77"}

	b.setHang(true)
	defer b.setHang(false)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, _ = a.sess.CallTool(ctx, &sdk.CallToolParams{Name: "refund", Arguments: args}) // dies with the process
	}()
	for deadline := time.Now().Add(10 * time.Second); b.count("refund") == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the upstream was never called")
		}
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.sess.Wait() // the SDK reaps the process once its output ends

	b2 := d.startAgent(t, cfg)
	retry := b2.call(t, "refund", args)
	m := handoffMeta(retry)
	if !retry.IsError || b.count("refund") != 1 {
		t.Fatalf("the retry after the crash: %s, executions %d", resultText(retry), b.count("refund"))
	}
	if m["reason"] == "in_progress" && !strings.Contains(resultText(retry), "already running") {
		t.Fatalf("while the dead lease lasts the agent should hear it is running: %s", resultText(retry))
	}
	id := fmt.Sprint(m["operation"])
	d.waitState(t, id, "unknown_outcome") // the lease expired in action_pending
	late := b2.call(t, "refund", args)
	if !late.IsError || handoffMeta(late)["state"] != "unknown_outcome" || b.count("refund") != 1 {
		t.Fatalf("the retry after the lease expired: %s, executions %d", resultText(late), b.count("refund"))
	}
}

// TestMCP_ApprovalRunsTheApprovedSnapshot: a payout needs a person's
// approval; the agent's next call sends another amount, and what runs is
// the approved one — and the agent is told.
func TestMCP_ApprovalRunsTheApprovedSnapshot(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	a := d.startAgent(t, d.billingConfig(t, url))

	first := a.call(t, "payout", map[string]any{"customer": "cus_9", "amount": 100, "memo": "bonus"})
	m := handoffMeta(first)
	if !first.IsError || m["approval_pending"] != true || !strings.Contains(resultText(first), "Approval pending") || b.count("payout") != 0 {
		t.Fatalf("first call: %s %v, executions %d", resultText(first), m, b.count("payout"))
	}
	id := fmt.Sprint(m["operation"])
	op := d.operation(t, id)
	approve := d.call(t, d.idp.IDToken(t, d.approver), "POST", "/v1/operations/"+id+"/approve", map[string]any{
		"content_version": 1, "reason": "bonus agreed with finance", "expected_version": num(op, "version")})
	if approve.Status != 200 {
		t.Fatalf("approve: %d %s", approve.Status, approve.Raw)
	}

	next := a.call(t, "payout", map[string]any{"customer": "cus_9", "amount": 250, "memo": "bonus"})
	m = handoffMeta(next)
	if next.IsError || m["approved_snapshot"] != true || !strings.Contains(resultText(next), "approved snapshot") {
		t.Fatalf("the call after approval: %v %s %v", next.IsError, resultText(next), m)
	}
	if b.count("payout") != 1 || fmt.Sprint(b.last("payout")["amount"]) != "100" {
		t.Fatalf("the upstream ran %d times, last with %v; want once with the approved amount 100", b.count("payout"), b.last("payout"))
	}
	if str(d.operation(t, id), "state") != "completed" {
		t.Fatalf("state %s", str(d.operation(t, id), "state"))
	}
}

// TestMCP_CheckNamesFileToolAndField: a bad configuration is refused by
// `handoff mcp check` with where the mistake is.
func TestMCP_CheckNamesFileToolAndField(t *testing.T) {
	bin := handoffBinary(t)
	file := filepath.Join(t.TempDir(), "bad.yaml")
	_ = os.WriteFile(file, []byte(`handoff: {url: "http://127.0.0.1:1"}
upstreams:
  - name: crm
    url: http://127.0.0.1:1/mcp
    tools:
      - {name: create_task, type: crm.task.create, key: {from: [account]}, content: [account, title], on_error: maybe}
`), 0o600)
	out, err := exec.Command(bin, "mcp", "check", file).CombinedOutput()
	if err == nil || !strings.Contains(string(out), file) || !strings.Contains(string(out), `tool "create_task"`) ||
		!strings.Contains(string(out), "on_error") {
		t.Fatalf("check of a bad file: %v\n%s", err, out)
	}
	_ = os.WriteFile(file, []byte(`handoff: {url: "http://127.0.0.1:1"}
upstreams:
  - name: crm
    url: http://127.0.0.1:1/mcp
    tools:
      - {name: create_task, type: crm.task.create, key: {from: [account]}, content: [account, title]}
`), 0o600)
	if out, err := exec.Command(bin, "mcp", "check", file).CombinedOutput(); err != nil || !strings.Contains(string(out), "ok    create_task → crm.task.create") {
		t.Fatalf("check of a good file: %v\n%s", err, out)
	}
}

// TestMCP_RefusesAnUnreachableUpstream: `handoff mcp` does not start in
// front of an upstream it cannot reach, and says which.
func TestMCP_RefusesAnUnreachableUpstream(t *testing.T) {
	d := startMCPDesk(t)
	_, url := startBilling(t)
	file := filepath.Join(t.TempDir(), "mcp.yaml")
	_ = os.WriteFile(file, []byte(fmt.Sprintf(`handoff: {url: %q, token_env: HANDOFF_MCP_TOKEN}
upstreams:
  - {name: billing, url: %q}
  - {name: crm, url: "http://%s/mcp"}
`, d.URL, url, freeAddr(t, "127.0.0.1"))), 0o600)
	cmd := exec.Command(handoffBinary(t), "mcp", file)
	cmd.Env = append(os.Environ(), "HANDOFF_MCP_TOKEN="+d.mcpToken)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `upstream "crm"`) || !strings.Contains(string(out), "unreachable") {
		t.Fatalf("start with an unreachable upstream: %v\n%s", err, out)
	}
}

// TestMCP_RunningElsewhereThenReplayed: while one call runs, the same call
// from a second agent hears "already running" with when to retry; after it
// completed, the same call gets the stored result.
func TestMCP_RunningElsewhereThenReplayed(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	cfg := d.billingConfig(t, url)
	a1, a2 := d.startAgent(t, cfg), d.startAgent(t, cfg)
	args := map[string]any{"customer": "cus_3", "amount": 5, "memo": "top-up"}

	b.setHang(true)
	done := make(chan *sdk.CallToolResult)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := a1.sess.CallTool(ctx, &sdk.CallToolParams{Name: "refund", Arguments: args})
		if err != nil {
			res = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}
		}
		done <- res
	}()
	for deadline := time.Now().Add(10 * time.Second); b.count("refund") == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the upstream was never called")
		}
	}
	busy := a2.call(t, "refund", args)
	if m := handoffMeta(busy); !busy.IsError || m["reason"] != "in_progress" || !strings.Contains(resultText(busy), "already running") ||
		fmt.Sprint(m["retry_after_seconds"]) == "" {
		t.Fatalf("the same call while it runs: %s %v", resultText(busy), m)
	}
	b.setHang(false)
	if first := <-done; first.IsError || handoffMeta(first)["state"] != "completed" {
		t.Fatalf("the running call: %s %v", resultText(first), handoffMeta(first))
	}
	replay := a2.call(t, "refund", args)
	if replay.IsError || handoffMeta(replay)["replayed"] != true || !strings.Contains(resultText(replay), "refund #1 for cus_3") || b.count("refund") != 1 {
		t.Fatalf("the same call afterwards: %s %v, executions %d", resultText(replay), handoffMeta(replay), b.count("refund"))
	}
}

// TestMCP_NotExecutedThenRetryRuns: after a person confirms an unknown
// call did not happen and chooses retry, the agent's next call executes.
func TestMCP_NotExecutedThenRetryRuns(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	a := d.startAgent(t, d.billingConfig(t, url))
	args := map[string]any{"customer": "cus_4", "amount": 9, "memo": "fee"}

	b.setHang(true)
	first := a.call(t, "charge", args)
	b.setHang(false)
	id := fmt.Sprint(handoffMeta(first)["operation"])
	op := d.waitState(t, id, "unknown_outcome")
	r := d.call(t, d.idp.IDToken(t, d.operator), "POST", "/v1/operations/"+id+"/resolve", map[string]any{
		"action": "confirm_not_executed", "then": "retry", "reason": "no such charge in the console", "expected_version": num(op, "version")})
	if r.Status != 200 {
		t.Fatalf("confirm not executed: %d %s", r.Status, r.Raw)
	}
	next := a.call(t, "charge", args)
	if next.IsError || handoffMeta(next)["replayed"] != false || b.count("charge") != 2 || str(d.operation(t, id), "state") != "completed" {
		t.Fatalf("the call after 'not executed, retry': %s %v, executions %d", resultText(next), handoffMeta(next), b.count("charge"))
	}
}

// TestMCP_ErrorResultsFollowTheCard: an upstream error result is classified
// by the configuration's rules and settled by the card — a validation error
// is terminal — and the agent gets the upstream's text with the hand-off.
// A lost upstream connection after begin is an unknown outcome, and the
// next call reaches the upstream again.
func TestMCP_ErrorResultsFollowTheCard(t *testing.T) {
	d := startMCPDesk(t)
	b, url := startBilling(t)
	a := d.startAgent(t, d.billingConfig(t, url))

	bad := a.call(t, "refund", map[string]any{"customer": "cus_invalid", "amount": 1, "memo": "x"})
	m := handoffMeta(bad)
	if !bad.IsError || m["state"] != "failed_terminal" || !strings.Contains(resultText(bad), "invalid customer") ||
		!strings.Contains(resultText(bad), "A person is reconciling it") {
		t.Fatalf("a validation error result: %s %v", resultText(bad), m)
	}
	if op := d.operation(t, fmt.Sprint(m["operation"])); str(op, "last_error", "class") != "validation" {
		t.Fatalf("last_error: %v", op["last_error"])
	}

	unlisted := a.call(t, "delete_customer", map[string]any{"customer": "cus_1"})
	if !unlisted.IsError || !strings.Contains(resultText(unlisted), "not made") || b.count("delete_customer") != 0 {
		t.Fatalf("an unlisted tool whose annotations say nothing: %s, executions %d", resultText(unlisted), b.count("delete_customer"))
	}
	if read := a.call(t, "get_customer", map[string]any{"customer": "cus_1"}); read.IsError || b.count("get_customer") != 1 || handoffMeta(read) != nil {
		t.Fatalf("a read-only tool should pass through untouched: %s", resultText(read))
	}

	b.setHang(true)
	go func() {
		for deadline := time.Now().Add(10 * time.Second); b.count("refund") < 2 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		}
		b.http.CloseClientConnections() // the upstream's connection drops after it did the work
	}()
	lost := a.call(t, "refund", map[string]any{"customer": "cus_2", "amount": 3, "memo": "y"})
	b.setHang(false)
	if m := handoffMeta(lost); !lost.IsError || m["state"] != "unknown_outcome" || b.count("refund") != 2 {
		t.Fatalf("a lost upstream connection after begin: %s %v, executions %d", resultText(lost), m, b.count("refund"))
	}
	if read := a.call(t, "get_customer", map[string]any{"customer": "cus_1"}); read.IsError || b.count("get_customer") != 2 {
		t.Fatalf("after a lost connection the next call should reach the upstream again: %s", resultText(read))
	}
}
