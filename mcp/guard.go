package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opshandoff/handoff/client"
)

// maxStoredResult bounds the tool result kept as the operation's result
// data; a larger one is stored cut, and a replay says so.
const maxStoredResult = 32 << 10

// call is one guarded tool call on its way through the ledger.
type call struct {
	route *route
	args  arguments
	key   string
	sent  map[string]json.RawMessage // the content this call carries

	executed *sdk.CallToolResult        // the upstream's answer, when this call ran it
	snapshot map[string]json.RawMessage // the content that ran: the claimed, approved snapshot
	version  int                        // its content version
	failure  string                     // why the upstream call gave no answer
}

// guarded runs one call through the ledger: register and claim under the
// derived key, begin, call the upstream within the timeout, settle — and
// answers the agent with a tool result in every case, never a hang.
func (p *Proxy) guarded(ctx context.Context, req *sdk.CallToolRequest, r *route) *sdk.CallToolResult {
	args, err := parseArguments(req.Params.Arguments)
	if err != nil {
		return errorResult(err.Error(), nil)
	}
	key, err := deriveKey(r.upstream.cfg.Name, r.guard, args)
	if err != nil {
		return errorResult(err.Error(), nil)
	}
	c := &call{route: r, args: args, key: key, sent: content(r.guard, args)}
	if err := r.upstream.ready(ctx); err != nil {
		// Nothing is recorded or sent: the agent may simply call again.
		return errorResult(fmt.Sprintf("The upstream %q is unreachable; the call was not made. Retry it with the same arguments. (%v)", r.upstream.cfg.Name, err), nil)
	}
	cr := client.Request{Key: key, Type: r.guard.Type, Content: c.sent, LeaseSeconds: r.lease,
		Source: fmt.Sprintf("mcp %s/%s", r.upstream.cfg.Name, r.tool.Name), Worker: worker(req, r)}
	op, err := p.handoff.Do(ctx, cr, c.run)
	var pe *client.Problem
	if errors.As(err, &pe) && pe.Code == "fingerprint_mismatch" && pe.Operation != nil && r.requiresApproval &&
		pe.Operation.Approval != nil && (pe.Operation.State == "received" || pe.Operation.State == "failed_retryable") {
		// An approved snapshot waits under this key: it is what runs, whatever
		// the agent sends now (content is never regenerated on a retry).
		op, err = p.handoff.Resume(ctx, pe.Operation.ID, cr, c.run)
	}
	p.log.Info("mcp call", "tool", r.tool.Name, "upstream", r.upstream.cfg.Name, "key", key, "operation", op.ID, "state", op.State, "err", err)
	return p.answer(c, op, err)
}

// run is the one call to the upstream, with the claimed snapshot.
func (c *call) run(ctx context.Context, claim client.Claim) (client.Result, error) {
	if err := claim.ContentInto(&c.snapshot); err != nil {
		return client.Result{}, &client.ProviderError{Class: "config", Message: "the claimed content is not an object"}
	}
	cctx, cancel := context.WithTimeout(ctx, c.route.timeout)
	defer cancel()
	res, err := c.route.upstream.call(cctx, c.route.tool.Name, upstreamArguments(c.route.guard, c.args, c.snapshot, c.route.stripKey))
	var wire *jsonrpc.Error
	switch {
	case err != nil && cctx.Err() != nil && ctx.Err() == nil:
		c.failure = fmt.Sprintf("the upstream did not answer within %s", c.route.timeout)
		return client.Result{}, &client.ProviderError{Class: "timeout", Message: c.failure}
	case errors.As(err, &wire) && (wire.Code == jsonrpc.CodeInvalidParams || wire.Code == jsonrpc.CodeMethodNotFound):
		// The upstream refused the request itself: the tool did not run.
		c.failure = "the upstream refused the call: " + wire.Message
		return client.Result{}, &client.ProviderError{Class: "validation", Code: fmt.Sprint(wire.Code), Message: wire.Message}
	case err != nil:
		c.failure = "the connection to the upstream was lost: " + err.Error()
		return client.Result{}, &client.ProviderError{Class: "unknown", Message: c.failure}
	}
	c.executed = res
	if res.IsError {
		msg := text(res)
		return client.Result{}, &client.ProviderError{Class: c.route.guard.classify(msg), Message: truncate(msg, 2000)}
	}
	data, ref := stored(res)
	return client.Result{Ref: ref, Data: data}, nil
}

// storedResult is the result data the ledger keeps: the tool result's own
// JSON under "mcp_result", cut to maxStoredResult. The member tells a
// replay what a person's confirmation (which has its own data) is not.
type storedResult struct {
	Result    json.RawMessage `json:"mcp_result"`
	Truncated bool            `json:"truncated,omitempty"`
}

// stored is the result as the ledger keeps it, and its reference.
func stored(res *sdk.CallToolResult) (json.RawMessage, string) {
	raw, err := json.Marshal(res)
	if err != nil {
		raw = []byte(`{"content":[]}`)
	}
	sum := sha256.Sum256(raw)
	ref := "mcp-result:" + hex.EncodeToString(sum[:12])
	s := storedResult{Result: raw}
	if len(raw) > maxStoredResult {
		s.Result, _ = json.Marshal(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: truncate(text(res), maxStoredResult/2)}}})
		s.Truncated = true
	}
	data, _ := json.Marshal(s)
	return data, ref
}

// worker names the agent and the tool in the operation's timeline: the MCP
// client's name and version as it introduced itself, and the upstream tool.
func worker(req *sdk.CallToolRequest, r *route) string {
	who := "unknown-client"
	if info := req.Session.InitializeParams(); info != nil && info.ClientInfo != nil {
		who = info.ClientInfo.Name
		if info.ClientInfo.Version != "" {
			who += "/" + info.ClientInfo.Version
		}
	}
	return truncate(strings.ReplaceAll(fmt.Sprintf("mcp %s via %s/%s", who, r.upstream.cfg.Name, r.tool.Name), "\x00", ""), 200)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// retryIn is how long until the operation may be tried again.
func retryIn(at *time.Time) int {
	if at == nil {
		return 1
	}
	return max(1, int(time.Until(*at).Seconds()+0.999))
}
