package chaos

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the checker's and the nemesis' own connections
	"github.com/opshandoff/handoff/internal/freeport"
	"github.com/opshandoff/handoff/store/storetest"
)

// cluster is a set of `handoff serve` replicas on one PostgreSQL database,
// each on an address of its own that survives a restart, so a client bound
// to a replica reaches it again once it is back.
type cluster struct {
	t        *testing.T
	bin      string
	env      []string
	app      string // application_name of the replicas' connections
	dbURL    string
	token    string
	replicas []*replica
}

type replica struct {
	addr string
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	logs *lockedBuffer
}

// buildBinary builds cmd/handoff as the e2e tests do, into the test's
// temporary directory, unless HANDOFF_BIN names one already built.
func buildBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("HANDOFF_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "handoff")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "../cmd/handoff")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startCluster starts n replicas on a fresh database: the first alone, so
// that it migrates, then a workflow token, then the others.
func startCluster(t *testing.T, n int) *cluster {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	c := &cluster{t: t, bin: buildBinary(t), app: "handoff_chaos_" + hex.EncodeToString(b)}
	c.dbURL = storetest.URL(t) + "&application_name=" + c.app
	c.env = append(os.Environ(), "HANDOFF_DATABASE_URL="+c.dbURL, "HANDOFF_CARDS=testdata/cards.yaml",
		"HANDOFF_SWEEP_INTERVAL=100ms")
	for i := range n {
		addr, err := freeport.Addr("127.0.0.1")
		if err != nil {
			t.Fatal(err)
		}
		r := &replica{addr: addr, logs: &lockedBuffer{}}
		c.replicas = append(c.replicas, r)
		c.start(r)
		if err := r.ready(); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			out, err := c.cli("token", "create", "--namespace", "chaos", "--name", "chaos")
			if err != nil {
				t.Fatalf("token create: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			c.token = lines[len(lines)-1]
		}
	}
	t.Cleanup(func() {
		for _, r := range c.replicas {
			r.stop()
		}
	})
	return c
}

func (c *cluster) start(r *replica) {
	r.mu.Lock()
	defer r.mu.Unlock()
	cmd := exec.Command(c.bin, "serve")
	cmd.Env = append(append([]string{}, c.env...), "HANDOFF_ADDR="+r.addr)
	cmd.Stdout, cmd.Stderr = r.logs, r.logs
	if err := cmd.Start(); err != nil {
		c.t.Errorf("start replica %s: %v", r.addr, err)
		return
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	r.cmd, r.done = cmd, done
}

// kill9 ends the replica with SIGKILL: no shutdown, requests in flight cut.
func (r *replica) kill9() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		<-done
	}
}

// stop ends the replica as an orchestrator would, SIGTERM then SIGKILL.
func (r *replica) stop() {
	r.mu.Lock()
	cmd, done := r.cmd, r.done
	r.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.kill9()
	}
}

func (r *replica) url() string { return "http://" + r.addr }

// ready waits until the replica's /readyz answers 200.
func (r *replica) ready() error {
	r.mu.Lock()
	done := r.done
	r.mu.Unlock()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-done:
			return fmt.Errorf("replica %s exited:\n%s", r.addr, r.logs.String())
		default:
		}
		if resp, err := http.Get(r.url() + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("replica %s was not ready in time:\n%s", r.addr, r.logs.String())
}

// cli runs a handoff subcommand on the cluster's database.
func (c *cluster) cli(args ...string) (string, error) {
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// db is a connection of the checker's own to the cluster's database.
func (c *cluster) db() *sql.DB {
	db, err := sql.Open("pgx", c.dbURL)
	if err != nil {
		c.t.Fatal(err)
	}
	c.t.Cleanup(func() { db.Close() })
	return db
}

// terminateBackends kills every database connection the replicas hold and
// reports how many.
func (c *cluster) terminateBackends(ctx context.Context, admin *sql.DB) int64 {
	var n int64
	_ = admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND pid <> pg_backend_pid()`, c.app).Scan(&n)
	return n
}

// nemesisStats counts the faults injected.
type nemesisStats struct {
	kills, restarts, backends, pauses atomic.Int64
}

// runNemesis injects faults until ctx ends, in turn: a replica killed with
// SIGKILL and restarted on its address after a moment; every database
// connection terminated every 50 ms for a second. Pauses past a lease are
// the pausing workers' (workload_test.go).
func (c *cluster) runNemesis(ctx context.Context, every time.Duration, st *nemesisStats) {
	admin, err := sql.Open("pgx", os.Getenv(storetest.EnvPostgres))
	if err != nil {
		c.t.Error(err)
		return
	}
	defer admin.Close()
	sleep := func(d time.Duration) bool {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(d):
			return true
		}
	}
	for round := 0; sleep(every); round++ {
		if round%2 == 0 {
			r := c.replicas[round/2%len(c.replicas)]
			r.kill9()
			st.kills.Add(1)
			time.Sleep(time.Duration(300+round*37%500) * time.Millisecond)
			c.start(r)
			if err := r.ready(); err != nil {
				c.t.Errorf("restart after kill -9: %v", err)
				return
			}
			st.restarts.Add(1)
			continue
		}
		for until := time.Now().Add(time.Second); time.Now().Before(until) && ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
			st.backends.Add(c.terminateBackends(context.Background(), admin))
		}
	}
}

// lockedBuffer is a log a child process writes while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
