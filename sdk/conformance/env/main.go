// Command env starts what the clients' conformance suites run against: the
// real handoff binary on a fresh database, the sandbox provider, and a
// fault-injecting proxy in front of the server. It prints one JSON line —
// the URLs and a workflow token — and runs until its standard input closes
// or it is signalled, so a test runner that dies takes it along.
//
// The database is SQLite in a temporary directory, or a fresh schema of the
// PostgreSQL database HANDOFF_TEST_POSTGRES names (dropped on exit).
//
// The proxy's control endpoint, /_conformance/faults:
//
//	POST   {"path_suffix": "/settle", "status": 503, "retry_after": 1, "times": 1}
//	GET    → {"hits": 1, "pending": 0, "forwarded": 3}
//	DELETE clears the rules and the counts
//
// forwarded counts the requests that reached the server.
//
// A matching request is answered with the status as an "unavailable"
// problem and never reaches the server.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/opshandoff/handoff/internal/freeport"
	"github.com/opshandoff/handoff/sandbox"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance env:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("handoff", "", "the handoff binary (required)")
	cards := flag.String("cards", "", "the operation types (default: cards.yaml beside scenarios.json)")
	flag.Parse()
	if *bin == "" {
		return errors.New("-handoff is required")
	}
	if *cards == "" {
		*cards = filepath.Join(here(), "cards.yaml")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // the parent's end of stdin closing ends the run
		_, _ = bufio.NewReader(os.Stdin).ReadString(0)
		stop()
	}()

	dir, err := os.MkdirTemp("", "handoff-conformance")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dbURL, dropDB, err := database(dir)
	if err != nil {
		return err
	}
	defer dropDB()

	addr, err := freeAddr()
	if err != nil {
		return err
	}
	env := append(os.Environ(), "HANDOFF_DATABASE_URL="+dbURL, "HANDOFF_ADDR="+addr,
		"HANDOFF_CARDS="+*cards, "HANDOFF_SWEEP_INTERVAL=100ms")
	tok := exec.Command(*bin, "token", "create", "--namespace", "conformance", "--name", "conformance")
	tok.Env, tok.Stderr = env, os.Stderr
	out, err := tok.Output()
	if err != nil {
		return fmt.Errorf("token create: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	token := lines[len(lines)-1]

	srvCtx, cancelSrv := context.WithCancel(context.Background())
	defer cancelSrv()
	srv := exec.CommandContext(srvCtx, *bin, "serve")
	srv.Env, srv.Stdout, srv.Stderr = env, os.Stderr, os.Stderr
	srv.Cancel = func() error { return srv.Process.Signal(syscall.SIGTERM) }
	srv.WaitDelay = 10 * time.Second
	if err := srv.Start(); err != nil {
		return err
	}
	defer func() { cancelSrv(); _ = srv.Wait() }()
	server := "http://" + addr
	if err := waitReady(ctx, server); err != nil {
		return err
	}

	sb, err := sandbox.New(sandbox.Config{Idempotency: sandbox.IdempotencyNone, Hold: 10 * time.Second})
	if err != nil {
		return err
	}
	sbURL, err := serveOn(ctx, sb.Handler())
	if err != nil {
		return err
	}
	target, _ := url.Parse(server)
	proxyURL, err := serveOn(ctx, newFaultProxy(target))
	if err != nil {
		return err
	}
	line, _ := json.Marshal(map[string]string{"url": proxyURL, "server": server, "sandbox": sbURL,
		"token": token, "faults": proxyURL + "/_conformance/faults"})
	fmt.Println(string(line))
	<-ctx.Done()
	return nil
}

// here is the folder of scenarios.json: the working directory's
// sdk/conformance, or the working directory itself.
func here() string {
	for _, d := range []string{"sdk/conformance", "."} {
		if _, err := os.Stat(filepath.Join(d, "scenarios.json")); err == nil {
			abs, _ := filepath.Abs(d)
			return abs
		}
	}
	return "."
}

// database is a fresh database URL for the binary and how to drop it.
func database(dir string) (string, func(), error) {
	base := os.Getenv("HANDOFF_TEST_POSTGRES")
	if base == "" {
		return "sqlite://" + filepath.Join(dir, "handoff.db"), func() {}, nil
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "conf_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		return "", nil, fmt.Errorf("creating schema on HANDOFF_TEST_POSTGRES: %w", err)
	}
	drop := func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}

func freeAddr() (string, error) { return freeport.Addr("127.0.0.1") }

func waitReady(ctx context.Context, server string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(server + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the server did not become ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// serveOn serves h on a free loopback port until ctx ends.
func serveOn(ctx context.Context, h http.Handler) (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go func() { <-ctx.Done(); _ = srv.Close() }()
	return "http://" + ln.Addr().String(), nil
}
