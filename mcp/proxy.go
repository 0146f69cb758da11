package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/opshandoff/handoff/client"
)

// Proxy is the MCP server `handoff mcp` runs: the upstreams' tools, each
// passed through, guarded by the ledger, or refused.
type Proxy struct {
	cfg       *Config
	handoff   *client.Client
	upstreams []*upstream
	routes    map[string]*route
	server    *sdk.Server
	log       *slog.Logger
}

// route is how one exposed tool is answered.
type route struct {
	upstream *upstream
	tool     *sdk.Tool   // as the upstream listed it
	guard    *ToolConfig // nil: passed through
	refused  string      // non-empty: why calls are refused

	lease            int           // the card's lease, in seconds
	timeout          time.Duration // how long the upstream may take
	requiresApproval bool
	stripKey         bool // the idempotency-key argument is ours, not the upstream's
}

// card is what the proxy needs of an operation type.
type card struct {
	Lease            string `json:"lease"`
	RequiresApproval bool   `json:"requires_approval"`
}

// New reaches the Handoff server and every upstream and builds the tool
// table. It refuses to start — naming the upstream, tool and field — when an
// upstream cannot be reached, lacks a configured tool or argument, or a
// configured operation type is unknown to the server.
func New(ctx context.Context, cfg *Config, token, version string, log *slog.Logger) (*Proxy, error) {
	if token == "" {
		return nil, fmt.Errorf("%s: handoff: token_env: $%s is empty; create a workflow token with `handoff token create`", cfg.file, cfg.tokenEnv())
	}
	p := &Proxy{cfg: cfg, handoff: client.New(cfg.url(), token), routes: map[string]*route{}, log: log}
	impl := &sdk.Implementation{Name: "handoff-mcp", Version: version}
	for _, uc := range cfg.Upstreams {
		u, err := connectUpstream(ctx, uc, impl, cfg.tokenEnv())
		if err != nil {
			p.Close()
			return nil, err
		}
		p.upstreams = append(p.upstreams, u)
		if err := p.addRoutes(ctx, u); err != nil {
			p.Close()
			return nil, err
		}
	}
	p.server = sdk.NewServer(&sdk.Implementation{Name: "handoff-mcp", Title: "Handoff", Version: version},
		&sdk.ServerOptions{Instructions: "Side-effecting tools here are recorded in Handoff's ledger: " +
			"a repeated call returns the stored result; when an answer says a person is reconciling a call, do not retry it under other arguments."})
	for name, r := range p.routes {
		p.server.AddTool(r.exposed(name), p.handler(r))
	}
	return p, nil
}

// addRoutes decides, for each tool an upstream lists, how it is answered.
func (p *Proxy) addRoutes(ctx context.Context, u *upstream) error {
	listed := map[string]*sdk.Tool{}
	for _, t := range u.tools {
		listed[t.Name] = t
	}
	guarded := map[string]*ToolConfig{}
	for i := range u.cfg.Tools {
		tc := &u.cfg.Tools[i]
		where := fmt.Sprintf("upstream %q, tool %q", u.cfg.Name, tc.Name)
		t, ok := listed[tc.Name]
		if !ok {
			return &configError{p.cfg.file, where, "name", "the upstream lists no such tool"}
		}
		for field, names := range map[string][]string{"key.from": tc.Key.From, "content": tc.Content} {
			for _, n := range names {
				if props := properties(t); props != nil && props[n] == nil {
					return &configError{p.cfg.file, where, field, fmt.Sprintf("the tool has no argument %q", n)}
				}
			}
		}
		guarded[tc.Name] = tc
	}
	for _, p := range u.cfg.Pass {
		if listed[p] == nil {
			return &configError{"", fmt.Sprintf("upstream %q", u.cfg.Name), "pass", fmt.Sprintf("the upstream lists no tool %q", p)}
		}
	}
	for _, t := range u.tools {
		if other, taken := p.routes[t.Name]; taken {
			return fmt.Errorf("%s: upstreams %q and %q both list a tool %q", p.cfg.file, other.upstream.cfg.Name, u.cfg.Name, t.Name)
		}
		r := &route{upstream: u, tool: t, guard: guarded[t.Name]}
		switch {
		case r.guard != nil:
			if err := p.loadCard(ctx, r); err != nil {
				return err
			}
			if k := r.guard.Key.Argument; k != "" {
				if props := properties(t); props == nil || props[k] == nil {
					r.stripKey = true
				}
			}
		case !mayPass(t) && !slices.Contains(u.cfg.Pass, t.Name):
			r.refused = fmt.Sprintf("The tool %q of upstream %q may change or destroy things (its annotations say so, or say nothing), "+
				"and the Handoff configuration neither guards it nor passes it explicitly; the call was not made.", t.Name, u.cfg.Name)
		}
		p.routes[t.Name] = r
	}
	return nil
}

// loadCard reads the tool's operation type from the server: its lease is
// the default timeout of the upstream call.
func (p *Proxy) loadCard(ctx context.Context, r *route) error {
	where := fmt.Sprintf("upstream %q, tool %q", r.upstream.cfg.Name, r.guard.Name)
	var c card
	if err := p.handoff.Call(ctx, http.MethodGet, "/v1/operation-types/"+url.PathEscape(r.guard.Type), nil, &c); err != nil {
		if client.IsCode(err, "not_found") || client.IsCode(err, "unknown_type") {
			return &configError{p.cfg.file, where, "type", fmt.Sprintf("the Handoff server has no operation type %q", r.guard.Type)}
		}
		return fmt.Errorf("Handoff at %s: reading operation type %q: %w", p.cfg.url(), r.guard.Type, err)
	}
	lease, err := time.ParseDuration(c.Lease)
	if err != nil || lease < time.Second {
		lease = 30 * time.Second
	}
	r.lease, r.timeout, r.requiresApproval = int(lease/time.Second), lease, c.RequiresApproval
	if r.guard.timeout > 0 {
		r.timeout = r.guard.timeout
	}
	return nil
}

// mayPass: an unlisted tool passes through only when its annotations say
// it reads, or that it is not destructive. Saying nothing is destructive,
// as the MCP specification's defaults are.
func mayPass(t *sdk.Tool) bool {
	a := t.Annotations
	return a != nil && (a.ReadOnlyHint || (a.DestructiveHint != nil && !*a.DestructiveHint))
}

// exposed is the tool as the agent sees it: the upstream's, with guarded
// and refused ones marked in the description.
func (r *route) exposed(name string) *sdk.Tool {
	t := *r.tool
	t.Name = name
	switch {
	case r.guard != nil:
		t.Description = fmt.Sprintf("[Guarded by Handoff as %s: a repeated call returns the stored result.] %s", r.guard.Type, t.Description)
		if r.stripKey {
			t.InputSchema = withKeyArgument(t.InputSchema, r.guard.Key.Argument)
		}
	case r.refused != "":
		t.Description = "[Refused by Handoff: not configured.] " + t.Description
	}
	if t.InputSchema == nil {
		t.InputSchema = map[string]any{"type": "object"}
	}
	return &t
}

// withKeyArgument adds the idempotency-key argument to a tool's schema.
func withKeyArgument(schema any, name string) any {
	raw, _ := json.Marshal(schema)
	var s map[string]any
	if json.Unmarshal(raw, &s) != nil || s == nil {
		s = map[string]any{"type": "object"}
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	props[name] = map[string]any{"type": "string",
		"description": "A key naming this one intended action; send the same key when repeating the same action, a new one for a new action."}
	s["properties"] = props
	req, _ := s["required"].([]any)
	s["required"] = append(req, name)
	return s
}

func properties(t *sdk.Tool) map[string]any {
	s, ok := t.InputSchema.(map[string]any)
	if !ok {
		return nil
	}
	props, _ := s["properties"].(map[string]any)
	return props
}

func (p *Proxy) handler(r *route) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if why, ok := refusedFrame(req.Params.Arguments); ok {
			return errorResult(fmt.Sprintf("Handoff refused the call; it was not made: %s.", why), nil), nil
		}
		switch {
		case r.refused != "":
			return errorResult(r.refused, nil), nil
		case r.guard != nil:
			return p.guarded(ctx, req, r), nil
		}
		return p.passThrough(ctx, req, r)
	}
}

// passThrough calls an unguarded tool within the upstream's pass timeout.
func (p *Proxy) passThrough(ctx context.Context, req *sdk.CallToolRequest, r *route) (*sdk.CallToolResult, error) {
	if err := r.upstream.ready(ctx); err != nil {
		return errorResult(fmt.Sprintf("The upstream %q is unreachable; the call was not made: %v", r.upstream.cfg.Name, err), nil), nil
	}
	cctx, cancel := context.WithTimeout(ctx, r.upstream.cfg.passTimeout())
	defer cancel()
	res, err := r.upstream.call(cctx, r.tool.Name, req.Params.Arguments)
	var wire *jsonrpc.Error
	switch {
	case err != nil && cctx.Err() != nil && ctx.Err() == nil:
		return errorResult(fmt.Sprintf("The upstream %q did not answer within %s.", r.upstream.cfg.Name, r.upstream.cfg.passTimeout()), nil), nil
	case err != nil && !errors.As(err, &wire): // the upstream's own refusals are forwarded as they are
		return errorResult(fmt.Sprintf("The upstream %q did not answer: %v", r.upstream.cfg.Name, err), nil), nil
	}
	return res, err
}

// Server is the MCP server, for a transport to run.
func (p *Proxy) Server() *sdk.Server { return p.server }

// RunStdio serves one agent host over standard input and output.
func (p *Proxy) RunStdio(ctx context.Context) error {
	return p.server.Run(ctx, &sdk.IOTransport{Reader: newFrameGuard(os.Stdin), Writer: stdout{os.Stdout}})
}

// HTTPHandler serves agents over streamable HTTP.
func (p *Proxy) HTTPHandler() http.Handler {
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return p.server }, nil)
}

// Close ends the upstream sessions (and the processes started for them).
func (p *Proxy) Close() {
	for _, u := range p.upstreams {
		u.close()
	}
}

// errorResult is a tool result the agent reads as an error.
func errorResult(text string, meta map[string]any) *sdk.CallToolResult {
	r := &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}
	if meta != nil {
		r.Meta = sdk.Meta{"handoff": meta}
	}
	return r
}

// text is every text content of a result, joined.
func text(r *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}
