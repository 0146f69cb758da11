package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// healthcheck asks a running server whether it is ready (GET /readyz) and
// fails unless it answers 200. It is the container image's HEALTHCHECK:
// the image has no shell and no curl. Without a URL it asks the server
// this environment configures, on loopback when HANDOFF_ADDR listens on
// every interface.
func healthcheck(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	var base string
	switch len(args) {
	case 0:
		base = "http://" + probeAddr(cfg.Addr)
	case 1:
		base = args[0]
	default:
		return fmt.Errorf("usage: handoff healthcheck [URL]")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s/readyz answered %d: %s", base, resp.StatusCode, body)
	}
	fmt.Fprintf(stdout, "%s/readyz: %s\n", base, body)
	return nil
}

// probeAddr is where a process on the same host reaches a server listening
// on addr: the unspecified address (0.0.0.0, ::, or none) means loopback.
func probeAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
