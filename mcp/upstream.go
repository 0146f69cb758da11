package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// upstream is a connected upstream MCP server and the tools it listed.
type upstream struct {
	cfg        UpstreamConfig
	clientInfo *sdk.Implementation
	// withhold names the variable with Handoff's token: never passed on.
	withhold string
	mu       sync.Mutex
	session  *sdk.ClientSession
	tools    []*sdk.Tool
}

// connectUpstream starts or reaches the upstream and lists its tools; an
// upstream that cannot be reached is named in the error.
func connectUpstream(ctx context.Context, cfg UpstreamConfig, impl *sdk.Implementation, withhold string) (*upstream, error) {
	u := &upstream{cfg: cfg, clientInfo: impl, withhold: withhold}
	if err := u.connect(ctx); err != nil {
		return nil, err
	}
	var tools []*sdk.Tool
	for t, err := range u.session.Tools(ctx, nil) {
		if err != nil {
			u.close()
			return nil, fmt.Errorf("upstream %q: listing tools: %w", cfg.Name, err)
		}
		tools = append(tools, t)
	}
	u.tools = tools
	return u, nil
}

func (u *upstream) connect(ctx context.Context) error {
	var t sdk.Transport
	if len(u.cfg.Command) > 0 {
		cmd := exec.Command(u.cfg.Command[0], u.cfg.Command[1:]...)
		cmd.Env = upstreamEnv(os.Environ(), u.cfg, u.withhold)
		cmd.Stderr = os.Stderr // the upstream's diagnostics go where ours do
		t = &sdk.CommandTransport{Command: cmd}
	} else {
		t = &sdk.StreamableClientTransport{Endpoint: u.cfg.URL, HTTPClient: &http.Client{}, MaxRetries: 1,
			DisableStandaloneSSE: true}
	}
	sess, err := sdk.NewClient(u.clientInfo, nil).Connect(ctx, t, nil)
	if err != nil {
		what := u.cfg.URL
		if what == "" {
			what = u.cfg.Command[0]
		}
		return fmt.Errorf("upstream %q (%s) is unreachable: %w", u.cfg.Name, what, err)
	}
	u.mu.Lock()
	u.session = sess
	u.mu.Unlock()
	return nil
}

// pingTimeout bounds the check that a session is still there.
const pingTimeout = 5 * time.Second

// ready makes sure the session answers before a call is sent on it: a
// session that has ended while idle (the upstream process died, its server
// restarted and answers 404 for the old session) is replaced now, while
// nothing has been sent, so the call that follows is not lost in doubt.
func (u *upstream) ready(ctx context.Context) error {
	u.mu.Lock()
	sess := u.session
	u.mu.Unlock()
	if sess != nil {
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err := sess.Ping(pctx, nil)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		u.mu.Lock()
		if u.session == sess {
			u.session = nil
			_ = sess.Close()
		}
		u.mu.Unlock()
	}
	return u.connect(ctx)
}

// call calls the upstream tool. A session that has ended (the upstream
// process died, its server restarted) is reconnected once for the next
// call; the call that found it ended reports the error, because after begin
// nobody can know whether the upstream acted before it went away.
func (u *upstream) call(ctx context.Context, name string, args any) (*sdk.CallToolResult, error) {
	u.mu.Lock()
	sess := u.session
	u.mu.Unlock()
	if sess == nil {
		if err := u.connect(ctx); err != nil {
			return nil, err
		}
		return u.call(ctx, name, args)
	}
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	var wire *jsonrpc.Error
	if err != nil && ctx.Err() == nil && !errors.As(err, &wire) { // not an answer: the connection is gone
		u.mu.Lock()
		if u.session == sess {
			u.session = nil
			_ = sess.Close()
		}
		u.mu.Unlock()
	}
	return res, err
}

func (u *upstream) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.session != nil {
		_ = u.session.Close()
		u.session = nil
	}
}
