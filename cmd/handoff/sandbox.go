package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/opshandoff/handoff/sandbox"
)

// sandboxCmd runs the simulated provider until ctx ends.
func sandboxCmd(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("sandbox", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	idem := fs.String("idempotency", sandbox.IdempotencyKey, "none, key or key_and_params")
	retention := fs.Duration("retention", 24*time.Hour, "how long a key is remembered (0: forever)")
	lookup := fs.String("lookup", sandbox.LookupAuthoritative, "none, authoritative or unsure")
	hold := fs.Duration("hold", 30*time.Second, "how long a timeout_after answer is held back")
	if err := fs.Parse(args); err != nil {
		return err
	}
	sb, err := sandbox.New(sandbox.Config{Idempotency: *idem, Retention: *retention, Lookup: *lookup, Hold: *hold})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: sb.Handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "sandbox provider on http://%s (idempotency %s, retention %s, lookup %s)\n", ln.Addr(), *idem, *retention, *lookup)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
