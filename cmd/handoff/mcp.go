package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/opshandoff/handoff/mcp"
)

// mcpCmd is `handoff mcp [--http ADDR] FILE` — the MCP server in front of
// the file's upstreams, over stdio (for an agent host that spawns it) or
// streamable HTTP at /mcp — and `handoff mcp check FILE`.
func mcpCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 2 && args[0] == "check" {
		return mcpCheck(ctx, args[1], stdout)
	}
	addr, file, err := parseMCPArgs(args, stderr)
	if err != nil {
		return err
	}
	cfg, err := mcp.LoadConfig(file)
	if err != nil {
		return err
	}
	startCtx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	p, err := mcp.New(startCtx, cfg, cfg.Token(), version, slog.Default())
	if err != nil {
		return err
	}
	defer p.Close()
	if addr == "" {
		return p.RunStdio(ctx)
	}
	return serveMCPHTTP(ctx, p.HTTPHandler(), addr)
}

// mcpCheck is `handoff mcp check FILE`: the file's summary, then what
// each upstream answers within 30 seconds.
func mcpCheck(ctx context.Context, file string, stdout io.Writer) error {
	cfg, err := mcp.LoadConfig(file)
	if err != nil {
		return err
	}
	for _, l := range cfg.Summary() {
		fmt.Fprintln(stdout, l)
	}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, l := range cfg.Inspect(ictx) {
		fmt.Fprintln(stdout, l)
	}
	return nil
}

// parseMCPArgs reads `handoff mcp [--http ADDR] FILE`, refusing an HTTP
// address off loopback.
func parseMCPArgs(args []string, stderr io.Writer) (addr, file string, err error) {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&addr, "http", "", "serve streamable HTTP at ADDR/mcp instead of stdio")
	if err := fs.Parse(args); err != nil {
		return "", "", err
	}
	if fs.NArg() != 1 {
		return "", "", errors.New("usage: handoff mcp [--http ADDR] FILE | handoff mcp check FILE")
	}
	if addr != "" && !loopbackAddr(addr) {
		// Whoever reaches --http acts with the workflow token: it serves
		// only this machine, and a proxy that authenticates agents may
		// forward to it.
		return "", "", fmt.Errorf("handoff mcp --http %s: it has no authentication of its own, so it listens only on a loopback "+
			"address (127.0.0.1, ::1, localhost); put a proxy that authenticates the agent in front of it", addr)
	}
	return addr, fs.Arg(0), nil
}

// serveMCPHTTP serves h at addr/mcp until ctx ends.
func serveMCPHTTP(ctx context.Context, h http.Handler, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = srv.Shutdown(sctx)
	}()
	slog.Info("handoff mcp listening", "addr", "http://"+ln.Addr().String()+"/mcp")
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// loopbackAddr reports whether a listen address is this machine's only.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}
