package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opshandoff/handoff/auth/oidctest"
)

// billing is an upstream MCP server for the tests, written with the Go SDK:
// it counts every execution, and can be told to hang after doing the work —
// the answer lost, the effect done.
type billing struct {
	mu   sync.Mutex
	runs map[string][]map[string]any // per tool, the arguments it executed with
	hang chan struct{}               // while set, a call blocks after its work until it is closed
	http *httptest.Server
}

func startBilling(t *testing.T) (*billing, string) {
	b := &billing{runs: map[string][]map[string]any{}}
	srv := sdk.NewServer(&sdk.Implementation{Name: "test-billing", Version: "1"}, nil)
	b.addTools(srv)
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	b.http = hs
	return b, hs.URL
}

// addTools lists the billing tools on srv.
func (b *billing) addTools(srv *sdk.Server) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"customer": map[string]any{"type": "string"}, "amount": map[string]any{"type": "number"},
		"memo": map[string]any{"type": "string"}}}
	yes := true
	for _, name := range []string{"charge", "refund", "payout"} {
		srv.AddTool(&sdk.Tool{Name: name, InputSchema: schema, Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes}}, b.tool(name))
	}
	srv.AddTool(&sdk.Tool{Name: "delete_customer", InputSchema: schema}, b.tool("delete_customer")) // says nothing: destructive
	srv.AddTool(&sdk.Tool{Name: "get_customer", InputSchema: schema, Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}}, b.tool("get_customer"))
}

func (b *billing) tool(name string) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var args map[string]any
		_ = json.Unmarshal(req.Params.Arguments, &args)
		b.mu.Lock()
		b.runs[name] = append(b.runs[name], args)
		n, hang := len(b.runs[name]), b.hang
		b.mu.Unlock()
		if args["customer"] == "cus_invalid" {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "invalid customer: cus_invalid is closed"}}}, nil
		}
		if hang != nil {
			select {
			case <-hang:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{
			Text: fmt.Sprintf("%s #%d for %v: %v", name, n, args["customer"], args["amount"])}}}, nil
	}
}

func (b *billing) count(tool string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.runs[tool])
}

func (b *billing) last(tool string) map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[tool][len(b.runs[tool])-1]
}

func (b *billing) setHang(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if on {
		b.hang = make(chan struct{})
	} else if b.hang != nil {
		close(b.hang)
		b.hang = nil
	}
}

// mcpDesk is a Handoff server with the MCP cards, people who sign in
// through a real OIDC provider, and a workflow token for `handoff mcp`.
type mcpDesk struct {
	*server
	idp      *oidctest.Provider
	operator oidctest.Person
	approver oidctest.Person
	mcpToken string
}

func startMCPDesk(t *testing.T) *mcpDesk {
	idp := oidctest.Start(t)
	s := startServer(t, "HANDOFF_CARDS=testdata/mcp/cards.yaml", "HANDOFF_OIDC_ISSUER="+idp.Issuer(),
		"HANDOFF_OIDC_CLIENT_ID="+idp.ClientID, "HANDOFF_OIDC_CLIENT_SECRET="+idp.ClientSecret,
		"HANDOFF_ROLE_MAP=ops=operator,leads=approver")
	return &mcpDesk{server: s, idp: idp, mcpToken: s.createToken(t, "agents", "mcp-gateway"),
		operator: oidctest.Person{Subject: "u-olga", Email: "olga@example.com", Name: "Olga", Groups: []string{"ops"}},
		approver: oidctest.Person{Subject: "u-abe", Email: "abe@example.com", Name: "Abe", Groups: []string{"leads"}}}
}

// billingConfig guards charge and refund (a short lease, so a lost
// `handoff mcp` is noticed quickly) and payout (approval), in front of url.
func (d *mcpDesk) billingConfig(t *testing.T, url string) string {
	file := filepath.Join(t.TempDir(), "mcp.yaml")
	cfg := fmt.Sprintf(`handoff: {url: %q, token_env: HANDOFF_MCP_TOKEN}
upstreams:
  - name: billing
    url: %q
    tools:
      - {name: charge, type: billing.charge, key: {from: [customer, memo]}, content: [customer, amount, memo], timeout: 1s}
      - {name: refund, type: billing.charge, key: {from: [customer, memo]}, content: [customer, amount, memo], timeout: 1m,
          errors: [{match: "^invalid", class: validation}]}
      - {name: payout, type: billing.payout, key: {from: [customer, memo]}, content: [customer, amount, memo]}
`, d.URL, url+"/")
	if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// agent is an MCP client session with a `handoff mcp` process over stdio.
type agent struct {
	sess *sdk.ClientSession
	cmd  *exec.Cmd
	logs *syncBuffer
}

func (d *mcpDesk) startAgent(t *testing.T, config string) *agent {
	cmd := exec.Command(handoffBinary(t), "mcp", config)
	cmd.Env = append(os.Environ(), "HANDOFF_MCP_TOKEN="+d.mcpToken)
	logs := &syncBuffer{}
	cmd.Stderr = logs
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := sdk.NewClient(&sdk.Implementation{Name: "e2e-agent", Version: "1.0"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		t.Fatalf("connect to handoff mcp: %v\n%s", err, logs.String())
	}
	a := &agent{sess: sess, cmd: cmd, logs: logs}
	t.Cleanup(func() {
		_ = sess.Close()
		if t.Failed() {
			t.Logf("handoff mcp log:\n%s", logs.String())
		}
	})
	return a
}

func (a *agent) call(t *testing.T, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := a.sess.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return res
}

func resultText(r *sdk.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func handoffMeta(r *sdk.CallToolResult) map[string]any {
	m, _ := r.Meta["handoff"].(map[string]any)
	return m
}

// operation reads an operation as the workflow token sees it.
func (d *mcpDesk) operation(t *testing.T, id string) map[string]any {
	t.Helper()
	r := d.call(t, d.mcpToken, "GET", "/v1/operations/"+id, nil)
	if r.Status != 200 {
		t.Fatalf("get %s: %d %s", id, r.Status, r.Raw)
	}
	return r.Body
}

// waitState polls until the operation is in state.
func (d *mcpDesk) waitState(t *testing.T, id, state string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		op := d.operation(t, id)
		if str(op, "state") == state {
			return op
		}
		if time.Now().After(deadline) {
			t.Fatalf("operation %s is %s, not %s", id, str(op, "state"), state)
		}
	}
}

// restart stops the upstream's HTTP server and starts a fresh one on the
// same address: its MCP sessions are gone, as after a deploy, and a request
// under an old session is answered 404 "session not found".
func (b *billing) restart(t *testing.T) {
	t.Helper()
	addr := b.http.Listener.Addr().String()
	b.http.Close()
	srv := sdk.NewServer(&sdk.Implementation{Name: "test-billing", Version: "2"}, nil)
	b.addTools(srv)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listening again on %s: %v", addr, err)
	}
	hs := httptest.NewUnstartedServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	hs.Listener.Close()
	hs.Listener = l
	hs.Start()
	t.Cleanup(hs.Close)
	b.http = hs
}
