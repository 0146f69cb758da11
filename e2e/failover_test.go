package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/internal/freeport"
)

// TestFailover_PostgreSQL: PostgreSQL itself fails over under load. The
// test starts its own primary and a streaming standby on loopback, two
// Handoff replicas on a multi-host URL that asks for the read-write server
// (target_session_attrs=read-write), and workers running the lifecycle with
// a provider that counts its calls. The standby falls a second behind (the
// primary's WAL sender stopped), then the test kills the primary's
// postmaster with SIGKILL, promotes the standby, and checks what the ledger
// kept.
//
// With a synchronous standby (synchronous_standby_names naming it,
// synchronous_commit on) nothing acknowledged may be lost: every completion
// a worker saw is on the new primary, every begin a worker saw (every
// provider call) is recorded there, so no key ran twice without the ledger
// saying why; `handoff audit verify --db` accepts the trail; during the gap
// calls answer 503 with Retry-After and never another 5xx; /readyz fails,
// then recovers; a replica whose address moved to the standby before its
// promotion answers its writes 503 too (PostgreSQL refuses them as a
// read-only transaction). The gap, from the kill to the first acknowledged
// call, is logged. With an asynchronous standby the same run documents
// what the promoted standby lacks; it does not fail on a loss.
func TestFailover_PostgreSQL(t *testing.T) {
	needPostgres(t)
	bin := postgresBinaries(t)
	t.Run("synchronous", func(t *testing.T) { failover(t, bin, true) })
	t.Run("asynchronous", func(t *testing.T) { failover(t, bin, false) })
}

// postgresBinaries is the directory of the installed PostgreSQL's server
// programs; the test skips where they, or a way to run them as a user
// other than root, are missing.
func postgresBinaries(t *testing.T) string {
	t.Helper()
	var dirs []string
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	found, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(found)))
	dirs = append(dirs, found...)
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	need := []string{"initdb", "pg_ctl", "pg_basebackup", "postgres"}
	for _, d := range dirs {
		ok := true
		for _, n := range need {
			if _, err := os.Stat(filepath.Join(d, n)); err != nil {
				ok = false
			}
		}
		if ok {
			if os.Geteuid() == 0 {
				if _, err := exec.LookPath("runuser"); err != nil {
					t.Skip("the PostgreSQL failover test runs as root here and needs runuser to start PostgreSQL as postgres")
				}
				if _, err := user.Lookup("postgres"); err != nil {
					t.Skip("the PostgreSQL failover test runs as root here and needs a postgres user to start PostgreSQL as")
				}
			}
			return d
		}
	}
	t.Skipf("the PostgreSQL failover test needs %s from an installed PostgreSQL (looked in %v)", strings.Join(need, ", "), dirs)
	return ""
}

// pgCluster is the test's own primary and standby.
type pgCluster struct {
	bin, base        string
	primary, standby string // data directories
	p1, p2           int    // their ports
}

// pg runs a PostgreSQL program as the postgres user when the test runs as
// root (initdb and postgres refuse root), else as the test's user.
func (c *pgCluster) pg(t *testing.T, name string, args ...string) string {
	t.Helper()
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.Command("runuser", append([]string{"-u", "postgres", "--", filepath.Join(c.bin, name)}, args...)...)
	} else {
		cmd = exec.Command(filepath.Join(c.bin, name), args...)
	}
	cmd.Dir = c.base
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s%s", name, args, err, out, c.serverLogs())
	}
	return string(out)
}

func (c *pgCluster) serverLogs() string {
	var b strings.Builder
	for _, n := range []string{"primary.log", "standby.log"} {
		if raw, err := os.ReadFile(filepath.Join(c.base, n)); err == nil {
			fmt.Fprintf(&b, "\n--- %s (last part)\n%s", n, raw[max(0, len(raw)-3000):])
		}
	}
	return b.String()
}

// appendFile adds text to a file PostgreSQL's user owns, keeping its owner.
func appendFile(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	chownPostgres(t, path)
}

func chownPostgres(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(path, uid, gid); err != nil {
		t.Fatal(err)
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	port, err := freeport.Port("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return port
}

// startCluster initialises a primary, creates the handoff database, takes
// a base backup for a streaming standby named standby1 and starts it; with
// synchronous the primary then waits for standby1 on every commit.
func startCluster(t *testing.T, bin string, synchronous bool) *pgCluster {
	t.Helper()
	base, err := os.MkdirTemp("", "handoff-failover-")
	if err != nil {
		t.Fatal(err)
	}
	chownPostgres(t, base)
	c := &pgCluster{bin: bin, base: base, primary: filepath.Join(base, "primary"), standby: filepath.Join(base, "standby"),
		p1: freePort(t), p2: freePort(t)}
	t.Cleanup(func() {
		for _, d := range []string{c.standby, c.primary} {
			if _, err := os.Stat(filepath.Join(d, "postmaster.pid")); err == nil {
				cmd := exec.Command(filepath.Join(bin, "pg_ctl"), "stop", "-m", "immediate", "-D", d)
				if os.Geteuid() == 0 {
					cmd = exec.Command("runuser", "-u", "postgres", "--", filepath.Join(bin, "pg_ctl"), "stop", "-m", "immediate", "-D", d)
				}
				cmd.Dir = base
				_ = cmd.Run()
			}
		}
		os.RemoveAll(base)
	})
	c.pg(t, "initdb", "--no-sync", "--auth=trust", "--username=postgres", "--encoding=UTF8", "-D", c.primary)
	// fsync is off to spare the shared test machine's disk: the primary is
	// killed, not its machine, so the page cache holds what it wrote.
	appendFile(t, filepath.Join(c.primary, "postgresql.conf"), fmt.Sprintf(`
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
wal_level = replica
max_wal_senders = 4
hot_standby = on
synchronous_commit = on
fsync = off
shared_buffers = 16MB
max_connections = 100
`, c.p1, base))
	c.pg(t, "pg_ctl", "start", "-w", "-t", "60", "-D", c.primary, "-l", filepath.Join(base, "primary.log"))

	admin := c.db(t, c.p1, "postgres")
	if _, err := admin.Exec("CREATE DATABASE handoff"); err != nil {
		t.Fatal(err)
	}
	c.pg(t, "pg_basebackup", "-h", "127.0.0.1", "-p", strconv.Itoa(c.p1), "-U", "postgres", "-D", c.standby,
		"--checkpoint=fast", "--wal-method=stream", "--no-sync")
	appendFile(t, filepath.Join(c.standby, "standby.signal"), "")
	// The standby's own settings: its port, its name on the primary, and no
	// synchronous standby of its own once promoted.
	appendFile(t, filepath.Join(c.standby, "postgresql.auto.conf"), fmt.Sprintf(`
port = %d
primary_conninfo = 'host=127.0.0.1 port=%d user=postgres application_name=standby1'
synchronous_standby_names = ''
`, c.p2, c.p1))
	c.pg(t, "pg_ctl", "start", "-w", "-t", "60", "-D", c.standby, "-l", filepath.Join(base, "standby.log"))

	if synchronous {
		if _, err := admin.Exec("ALTER SYSTEM SET synchronous_standby_names = 'standby1'"); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Exec("SELECT pg_reload_conf()"); err != nil {
			t.Fatal(err)
		}
	}
	want := "async"
	if synchronous {
		want = "sync"
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var state string
		_ = admin.QueryRow(`SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby1' AND state = 'streaming'`).Scan(&state)
		if state == want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("standby1 is not streaming as %s (%q)%s", want, state, c.serverLogs())
		}
	}
	return c
}

// db is a connection pool to one of the cluster's servers.
func (c *pgCluster) db(t *testing.T, port int, name string) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", port, name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// url is the multi-host URL Handoff is given: whichever of the two is the
// read-write server.
func (c *pgCluster) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/handoff?target_session_attrs=read-write&sslmode=disable", c.p1, c.p2)
}

// killPrimary sends SIGKILL to the primary's postmaster.
func (c *pgCluster) killPrimary(t *testing.T) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(c.primary, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.SplitN(string(raw), "\n", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// stopSender stops (SIGSTOP) the primary's WAL sender to standby1 and
// returns its process ID.
func (c *pgCluster) stopSender(t *testing.T) int {
	t.Helper()
	var pid int
	if err := c.db(t, c.p1, "postgres").QueryRow(`SELECT pid FROM pg_stat_replication WHERE application_name = 'standby1'`).Scan(&pid); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	return pid
}

// movingAddress forwards TCP connections on loopback to a target that can
// move, as a virtual IP or a DNS name moves at failover; moving cuts the
// connections it carries.
type movingAddress struct {
	ln     net.Listener
	mu     sync.Mutex
	target string
	conns  []net.Conn
}

func newMovingAddress(t *testing.T, target string) *movingAddress {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &movingAddress{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); m.move("") })
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			go m.carry(in)
		}
	}()
	return m
}

func (m *movingAddress) addr() string { return m.ln.Addr().String() }

func (m *movingAddress) carry(in net.Conn) {
	m.mu.Lock()
	target := m.target
	m.mu.Unlock()
	out, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		in.Close()
		return
	}
	m.mu.Lock()
	m.conns = append(m.conns, in, out)
	m.mu.Unlock()
	go func() { _, _ = io.Copy(out, in); out.Close() }()
	_, _ = io.Copy(in, out)
	in.Close()
}

func (m *movingAddress) move(target string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.target = target
	for _, c := range m.conns {
		c.Close()
	}
	m.conns = nil
}

// ackClock is a RoundTripper that notes when the first POST answered 2xx
// among those sent after a moment: the first acknowledged call.
type ackClock struct {
	next  http.RoundTripper
	after atomic.Int64 // unix nanoseconds; 0 while unset
	first atomic.Int64
}

func (a *ackClock) RoundTrip(r *http.Request) (*http.Response, error) {
	sent := time.Now().UnixNano()
	resp, err := a.next.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && resp.StatusCode < 300 {
		if after := a.after.Load(); after != 0 && sent > after {
			a.first.CompareAndSwap(0, time.Now().UnixNano())
		}
	}
	return resp, err
}

// readyWatch polls a replica's /readyz and notes whether it failed and
// whether it answered 200 after failing.
type readyWatch struct {
	failed, recovered atomic.Bool
}

func watchReady(ctx context.Context, url string) *readyWatch {
	w := &readyWatch{}
	hc := &http.Client{Timeout: 2 * time.Second}
	go func() {
		for ctx.Err() == nil {
			resp, err := hc.Get(url + "/readyz")
			ok := err == nil && resp.StatusCode == 200
			if err == nil {
				resp.Body.Close()
			}
			if !ok {
				w.failed.Store(true)
			} else if w.failed.Load() {
				w.recovered.Store(true)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return w
}

func failover(t *testing.T, bin string, synchronous bool) {
	mode := map[bool]string{true: "synchronous", false: "asynchronous"}[synchronous]
	c := startCluster(t, bin, synchronous)
	dbURL := c.url()
	replicas := []*server{startServer(t, "HANDOFF_DATABASE_URL="+dbURL), startServer(t, "HANDOFF_DATABASE_URL="+dbURL)}

	// A third replica reaches PostgreSQL through an address that moves at
	// failover (as a virtual IP or a DNS name does), without
	// target_session_attrs; the address moves to the standby before the
	// standby is promoted, so for a while its writes reach a read-only
	// server: they must answer 503 with Retry-After, not 500.
	var follower *server
	var moving *movingAddress
	var followerLogs *syncBuffer
	if synchronous {
		moving = newMovingAddress(t, fmt.Sprintf("127.0.0.1:%d", c.p1))
		p := launchProc(t, baseEnv(fmt.Sprintf("postgres://postgres@%s/handoff?sslmode=disable", moving.addr())))
		if err := p.ready(); err != nil {
			t.Fatal(err)
		}
		follower, followerLogs = &server{URL: p.URL, Token: replicas[0].Token}, p.logs
	}

	watch := &statusWatch{next: &http.Transport{MaxIdleConnsPerHost: 64}}
	clock := &ackClock{next: watch}
	clients := make([]*client.Client, len(replicas))
	for i, s := range replicas {
		clients[i] = client.New(s.URL, s.Token)
		clients[i].HTTP = &http.Client{Transport: clock, Timeout: 30 * time.Second}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	calls := map[string]int{}   // key → provider calls (each after an acknowledged begin)
	done := map[string]string{} // key → ref of every completion a worker saw acknowledged
	var completed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	const workers = 6
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := clients[w%len(clients)]
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key := fmt.Sprintf("w%d-%d", w, i)
				fn := func(context.Context, client.Claim) (client.Result, error) {
					mu.Lock()
					calls[key]++
					mu.Unlock()
					return client.Result{Ref: "ref_" + key}, nil
				}
				req := client.Request{Key: key, Type: "email.send", Content: map[string]any{"n": key},
					Worker: fmt.Sprintf("w%d", w), LeaseSeconds: 30}
				for try := 0; try < 5; try++ { // as a workflow engine retries its step
					op, err := cl.Do(context.Background(), req, fn)
					if err == nil && op.State == "completed" {
						mu.Lock()
						done[key] = op.Result.Ref
						mu.Unlock()
						completed.Add(1)
						break
					}
					if client.IsCode(err, "not_claimable") {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
		}()
	}
	stopLoad := func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		wg.Wait()
	}
	defer stopLoad()

	for deadline := time.Now().Add(30 * time.Second); completed.Load() < 30; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d operations completed before the kill", completed.Load())
		}
	}
	// The standby falls behind: the primary's WAL sender is stopped for a
	// second, as a slow link would hold it, and killed with the primary.
	// A synchronous primary acknowledges no commit meanwhile; an
	// asynchronous one goes on acknowledging what the standby never gets.
	sender := c.stopSender(t)
	time.Sleep(time.Second)
	before := completed.Load()
	watch.mu.Lock()
	n503Before := watch.n503
	watch.mu.Unlock()
	killed := time.Now()
	c.killPrimary(t)
	_ = syscall.Kill(sender, syscall.SIGKILL)
	ready := []*readyWatch{watchReady(ctx, replicas[0].URL), watchReady(ctx, replicas[1].URL)}
	if moving != nil {
		moving.move(fmt.Sprintf("127.0.0.1:%d", c.p2))
	}

	// The failure is detected: every replica's /readyz fails and calls
	// answer 503; then the standby is promoted.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		watch.mu.Lock()
		n503 := watch.n503 - n503Before
		watch.mu.Unlock()
		readOnly := true
		if follower != nil {
			r := follower.do(t, "POST", "/v1/operations", map[string]any{"key": fmt.Sprintf("moved-%d", time.Now().UnixNano()),
				"type": "crm.task.create", "content": map[string]any{"title": "x"}})
			if r.Status >= 500 && (r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "") {
				t.Fatalf("a write through the address moved to the standby before its promotion: %d %q %s, want 503 with Retry-After",
					r.Status, r.Header.Get("Retry-After"), r.Raw)
			}
			// The refusals it answered 503 came from the standby itself.
			readOnly = r.Status == http.StatusServiceUnavailable && strings.Contains(followerLogs.String(), "read-only transaction")
		}
		if ready[0].failed.Load() && ready[1].failed.Load() && n503 > 0 && readOnly {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the kill: /readyz failed %v %v, %d answers 503", ready[0].failed.Load(), ready[1].failed.Load(), n503)
		}
	}
	promoting := time.Since(killed)
	// Acknowledged calls are timed from here: the old primary's backends
	// may still answer for an instant after their postmaster died, into a
	// history the promotion then drops.
	clock.after.Store(time.Now().UnixNano())
	c.pg(t, "pg_ctl", "promote", "-w", "-t", "60", "-D", c.standby)
	promoted := time.Since(killed)

	for deadline := time.Now().Add(30 * time.Second); clock.first.Load() == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no call was acknowledged within 30s of the promotion%s", c.serverLogs())
		}
	}
	gap := time.Duration(clock.first.Load() - killed.UnixNano())
	time.Sleep(time.Second) // the load goes on on the new primary
	stopLoad()
	for deadline := time.Now().Add(15 * time.Second); !ready[0].recovered.Load() || !ready[1].recovered.Load(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not recover: %v %v", ready[0].recovered.Load(), ready[1].recovered.Load())
		}
	}
	cancel()
	if follower != nil {
		for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			r := follower.do(t, "POST", "/v1/operations", map[string]any{"key": "moved-after-promotion", "type": "crm.task.create",
				"content": map[string]any{"title": "x"}})
			if r.Status == http.StatusCreated {
				break
			}
			if r.Status != http.StatusServiceUnavailable || time.Now().After(deadline) {
				t.Fatalf("a write through the promoted standby: %d %s", r.Status, r.Raw)
			}
		}
	}

	watch.mu.Lock()
	bad, n503 := watch.bad, watch.n503
	watch.mu.Unlock()
	t.Logf("%s standby: failover gap %.1fs from kill -9 of the primary to the first acknowledged call (promotion asked at %.1fs, done at %.1fs); %d completed before the kill, %d in all; %d answers 503",
		mode, gap.Seconds(), promoting.Seconds(), promoted.Seconds(), before, completed.Load(), n503)
	if len(bad) > 0 {
		t.Errorf("%d answers were 5xx other than 503 with Retry-After, e.g. %v", len(bad), bad[:min(len(bad), 10)])
	}

	// What the new primary holds, read from it directly.
	db := c.db(t, c.p2, "handoff")
	var lost, unexplained, twice int
	var examples []string
	mu.Lock()
	defer mu.Unlock()
	for key, n := range calls {
		var rows, begun int
		var state, ref string
		err := db.QueryRow(`SELECT count(DISTINCT o.id), coalesce(min(o.state), ''), coalesce(min(o.result_ref), ''), count(a.began_at)
			FROM operations o LEFT JOIN attempts a ON a.operation_id = o.id
			WHERE o.namespace = 'campaigns' AND o.key = $1`, key).Scan(&rows, &state, &ref, &begun)
		if err != nil {
			t.Fatal(err)
		}
		if n > 1 {
			twice++
		}
		if want, ok := done[key]; ok && (rows != 1 || state != "completed" || ref != want) {
			lost++
			examples = append(examples, fmt.Sprintf("%s acknowledged completed (%s), on the new primary: %d rows, %q %q", key, want, rows, state, ref))
		}
		// Each provider call followed an acknowledged begin: the ledger
		// must record as many begun attempts, or a call ran that it
		// cannot account for.
		if begun < n {
			unexplained += n - begun
			examples = append(examples, fmt.Sprintf("%s: %d provider calls, %d begun attempts on the new primary", key, n, begun))
		}
	}
	t.Logf("%s standby: %d acknowledged completions of %d missing on the promoted standby; %d provider calls the ledger does not record; %d keys executed more than once",
		mode, lost, len(done), unexplained, twice)
	out, verr := cli(t, baseEnv(dbURL), "audit", "verify", "--db")
	if !synchronous {
		for _, e := range examples[:min(len(examples), 10)] {
			t.Log(e)
		}
		t.Logf("asynchronous standby: audit verify --db on the promoted standby: %v\n%s", verr, out)
		return
	}
	for _, e := range examples {
		t.Error(e)
	}
	if verr != nil {
		t.Errorf("audit verify --db on the new primary: %v\n%s", verr, out)
	}
}
