package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the admin connection that kills the server's backends
	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/store/storetest"
)

// The faults the running binary must survive: its database connections
// killed under load, replicas started together on a fresh database, a
// worker paused past its lease, and kill -9 in the middle of writes.

func needPostgres(t *testing.T) {
	t.Helper()
	if !storetest.Postgres() {
		t.Skip("needs PostgreSQL: set " + storetest.EnvPostgres)
	}
}

// proc is a `handoff serve` the test starts and stops itself.
type proc struct {
	URL    string
	cmd    *exec.Cmd
	logs   *syncBuffer
	exited chan struct{}
}

// launchProc starts `handoff serve` on a free port with env, without waiting
// for it to be ready.
func launchProc(t *testing.T, env []string) *proc {
	t.Helper()
	addr := freeAddr(t, "127.0.0.1")
	p := &proc{URL: "http://" + addr, logs: &syncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(handoffBinary(t), "serve")
	p.cmd.Env = append(append([]string{}, env...), "HANDOFF_ADDR="+addr)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() {
		p.stop()
		if t.Failed() {
			t.Logf("server %s log:\n%s", addr, p.logs.String())
		}
	})
	return p
}

func (p *proc) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// ready waits until /readyz answers 200; an error if the process exits or
// does not get there in time.
func (p *proc) ready() error {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-p.exited:
			return fmt.Errorf("serve exited (%v):\n%s", p.cmd.ProcessState, p.logs.String())
		default:
		}
		if resp, err := http.Get(p.URL + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
		}
	}
	return fmt.Errorf("serve was not ready in time:\n%s", p.logs.String())
}

// baseEnv is the environment of a serve on dbURL.
func baseEnv(dbURL string) []string {
	return append(os.Environ(), "HANDOFF_DATABASE_URL="+dbURL, "HANDOFF_CARDS=testdata/cards.yaml",
		"HANDOFF_SWEEP_INTERVAL=100ms")
}

// cli runs a handoff subcommand with env and returns its output.
func cli(t *testing.T, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(handoffBinary(t), args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// statusWatch is a RoundTripper that records every answer's status, so a
// test can say that no 5xx but 503 was ever sent, and counts the answers
// that succeeded (answered), the progress a killer waits for.
type statusWatch struct {
	next http.RoundTripper
	mu   sync.Mutex
	bad  []string
	n503 int
	ok   atomic.Int64
}

// answered is how many answers so far were 2xx.
func (w *statusWatch) answered() int64 { return w.ok.Load() }

func (w *statusWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := w.next.RoundTrip(r)
	if err == nil && resp.StatusCode < 300 {
		w.ok.Add(1)
	}
	if err == nil && resp.StatusCode >= 500 {
		w.mu.Lock()
		if resp.StatusCode == http.StatusServiceUnavailable {
			w.n503++
			if resp.Header.Get("Retry-After") == "" {
				w.bad = append(w.bad, r.Method+" "+r.URL.Path+": 503 without Retry-After")
			}
		} else {
			w.bad = append(w.bad, fmt.Sprintf("%s %s: %d", r.Method, r.URL.Path, resp.StatusCode))
		}
		w.mu.Unlock()
	}
	return resp, err
}

// TestFaults_ConnectionKillsUnderLoad: with every one of the server's
// database connections killed every 50 ms while workflows run, the server
// answers nothing 5xx but 503 (with Retry-After), every call the client
// saw completed stays completed, and no provider call ran twice.
func TestFaults_ConnectionKillsUnderLoad(t *testing.T) {
	needPostgres(t)
	app, dbURL := namedDatabase(t)
	s := startServer(t, "HANDOFF_DATABASE_URL="+dbURL)

	watch := &statusWatch{next: http.DefaultTransport}
	stopKills := killBackends(t, app, 50*time.Millisecond, watch.answered).stop

	c := client.New(s.URL, s.Token)
	c.HTTP = &http.Client{Transport: watch, Timeout: 30 * time.Second}
	var mu sync.Mutex
	calls := map[string]int{}
	done := map[string]string{} // key → ref of every Do the client saw complete
	deadline := time.Now().Add(6 * time.Second)
	parallel(8, func(w int) {
		for i := 0; time.Now().Before(deadline); i++ {
			key := fmt.Sprintf("w%d-%d", w, i)
			fn := func(context.Context, client.Claim) (client.Result, error) {
				mu.Lock()
				calls[key]++
				mu.Unlock()
				return client.Result{Ref: "ref_" + key}, nil
			}
			req := client.Request{Key: key, Type: "email.send", Content: map[string]any{"n": key}, Worker: "w", LeaseSeconds: 30}
			for try := 0; try < 5; try++ { // as a workflow engine would retry its step
				op, err := c.Do(context.Background(), req, fn)
				if err == nil && op.State == "completed" {
					mu.Lock()
					done[key] = op.Result.Ref
					mu.Unlock()
					break
				}
				if client.IsCode(err, "not_claimable") {
					break // in progress elsewhere, or for a person: not ours to finish
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	})
	kills := stopKills()

	watch.mu.Lock()
	bad, n503 := watch.bad, watch.n503
	watch.mu.Unlock()
	t.Logf("%d backends killed, %d operations completed, %d answers 503", kills, len(done), n503)
	if len(bad) > 0 {
		t.Errorf("%d answers were 5xx other than 503 with Retry-After, e.g. %v", len(bad), bad[:min(len(bad), 10)])
	}
	if kills == 0 || n503 == 0 || len(done) == 0 {
		t.Fatalf("the test did not bite: %d kills, %d answers 503, %d completed", kills, n503, len(done))
	}
	for key, n := range calls {
		if n > 1 {
			t.Errorf("the provider was called %d times for %s", n, key)
		}
	}
	for key, ref := range done {
		r := s.do(t, "GET", "/v1/operations?key="+key, nil)
		for try := 0; r.Status == http.StatusServiceUnavailable && try < 20; try++ {
			time.Sleep(100 * time.Millisecond) // a connection killed last may still be in the pool
			r = s.do(t, "GET", "/v1/operations?key="+key, nil)
		}
		items, _ := r.Body["items"].([]any)
		if len(items) != 1 {
			t.Errorf("acknowledged %s is lost: %s", key, r.Raw)
			continue
		}
		op := items[0].(map[string]any)
		if str(op, "state") != "completed" || str(op, "result", "ref") != ref {
			t.Errorf("acknowledged %s completed with %s, now: %v", key, ref, op)
		}
	}
}

// namedDatabase is a fresh PostgreSQL database URL whose connections carry
// an application_name of their own, so the test can find the server's
// backends, and only them, in pg_stat_activity.
func namedDatabase(t *testing.T) (app, dbURL string) {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	app = "handoff_e2e_" + hex.EncodeToString(b)
	return app, storetest.URL(t) + "&application_name=" + app
}

// killBackends terminates every backend named app, every interval, until
// the returned stop is called; stop reports how many it killed. With a
// progress count (not nil) it strikes only once the count has moved since
// its last strike: where opening a connection takes most of an interval,
// as it can on a loaded machine, a strike every interval kills every
// connection before its first statement, nothing ever completes, and the
// test tests nothing.
func killBackends(t *testing.T, app string, every time.Duration, progress func() int64) *backendKiller {
	t.Helper()
	admin, err := sql.Open("pgx", os.Getenv(storetest.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k := &backendKiller{struck: make(chan struct{})}
	var struckOnce sync.Once
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		seen := int64(-1)
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if progress != nil {
					if p := progress(); p == seen {
						continue
					} else {
						seen = p
					}
				}
				var n int64
				if admin.QueryRowContext(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
					WHERE application_name = $1 AND pid <> pg_backend_pid()`, app).Scan(&n) == nil && n > 0 {
					k.kills.Add(n)
					struckOnce.Do(func() { close(k.struck) })
				}
			}
		}
	}()
	var once sync.Once
	k.stop = func() int64 {
		once.Do(func() {
			cancel()
			<-done
			admin.Close()
		})
		return k.kills.Load()
	}
	t.Cleanup(func() { k.stop() })
	return k
}

// backendKiller is killBackends' handle: stop ends the strikes and reports
// how many backends they killed; struck is closed by the first strike that
// killed one, for a test whose outage must have begun before it goes on.
type backendKiller struct {
	stop   func() int64
	struck chan struct{}
	kills  atomic.Int64
}

// TestFaults_ClientRidesOutDatabaseOutage: a provider call that succeeded
// just as the server lost its database — every backend killed every 10 ms
// for 5 seconds — ends completed: the client re-sends settle with the same
// lease token until the database is back.
func TestFaults_ClientRidesOutDatabaseOutage(t *testing.T) {
	needPostgres(t)
	app, dbURL := namedDatabase(t)
	s := startServer(t, "HANDOFF_DATABASE_URL="+dbURL)
	c := client.New(s.URL, s.Token)
	var stop func() int64
	calls := 0
	op, err := c.Do(context.Background(), client.Request{Key: "outage", Type: "crm.task.create",
		Content: map[string]any{"title": "hi"}, LeaseSeconds: 30}, func(context.Context, client.Claim) (client.Result, error) {
		calls++
		k := killBackends(t, app, 10*time.Millisecond, nil)
		stop = k.stop
		// The provider answers once the outage has begun: once a strike
		// has killed one of the server's connections, not after a fixed
		// wait, which on a loaded machine can pass before the first strike
		// lands and leave the settle nothing to ride out.
		select {
		case <-k.struck:
		case <-time.After(10 * time.Second):
		}
		time.AfterFunc(5*time.Second, func() { stop() })
		return client.Result{Ref: "crm_outage"}, nil
	})
	kills := stop()
	if err != nil || op.State != "completed" || op.Result == nil || op.Result.Ref != "crm_outage" || calls != 1 {
		t.Fatalf("a provider call that succeeded during an outage must end completed (%d kills): %+v %v", kills, op, err)
	}
	if kills == 0 {
		t.Fatal("the outage killed nothing")
	}
}

// TestFaults_ReplicasStartTogether: four `serve` started at the same moment
// on a fresh database all start, five times over.
func TestFaults_ReplicasStartTogether(t *testing.T) {
	needPostgres(t)
	for trial := range 5 {
		env := baseEnv(storetest.URL(t))
		procs := make([]*proc, 4)
		for i := range procs {
			procs[i] = launchProc(t, env)
		}
		errs := make([]error, len(procs))
		parallel(len(procs), func(i int) { errs[i] = procs[i].ready() })
		for i, err := range errs {
			if err != nil {
				t.Fatalf("trial %d, replica %d: %v", trial, i, err)
			}
		}
		for _, p := range procs {
			p.stop()
		}
	}
}

// TestFaults_PausedWorkerIsFenced: a worker stopped (SIGSTOP) after its
// claim and resumed after its lease ran out is refused: another worker
// holds the operation by then, and only that one settles it.
func TestFaults_PausedWorkerIsFenced(t *testing.T) {
	s := startServer(t)
	worker := exec.Command(os.Args[0], "-test.run=^TestFaults_WorkerProcess$")
	worker.Env = append(os.Environ(), "HANDOFF_E2E_WORKER="+s.URL+" "+s.Token)
	out, err := worker.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	worker.Stderr = os.Stderr
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = worker.Process.Kill(); _ = worker.Wait() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		t.Fatal("the worker said nothing")
	}
	var id string
	var token int64
	if _, err := fmt.Sscanf(lines.Text(), "claimed %s %d", &id, &token); err != nil {
		t.Fatalf("worker: %q", lines.Text())
	}
	if err := worker.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}

	// The lease (1 s) runs out while the worker is stopped; another worker
	// claims once the retry it is owed comes due.
	var mine int64
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r := s.do(t, "POST", "/v1/operations/"+id+"/claim", map[string]any{"worker": "w2", "lease_seconds": 30})
		if r.Status == 200 {
			mine = num(r.Body, "lease", "token")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no second claim: %d %s", r.Status, r.Raw)
		}
	}
	if err := worker.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if !lines.Scan() {
		t.Fatal("the resumed worker said nothing")
	}
	if got := lines.Text(); got != "begin 409 stale_lease" {
		t.Fatalf("the paused worker was not fenced: %q", got)
	}
	s.do(t, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": mine})
	r := s.do(t, "POST", "/v1/operations/"+id+"/settle", map[string]any{"lease_token": mine, "outcome": "completed",
		"result": map[string]any{"ref": "by_w2"}})
	if r.Status != 200 || str(r.Body, "state") != "completed" || mine == token {
		t.Fatalf("the live holder could not settle: %d %s", r.Status, r.Raw)
	}
}

// TestFaults_WorkerProcess is the worker TestFaults_PausedWorkerIsFenced
// runs as a separate process; run directly, it does nothing.
func TestFaults_WorkerProcess(t *testing.T) {
	url, token, ok := strings.Cut(os.Getenv("HANDOFF_E2E_WORKER"), " ")
	if !ok {
		return
	}
	s := &server{URL: url, Token: token}
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": "paused", "type": "crm.task.create",
		"content": map[string]any{"title": "x"}, "claim": map[string]any{"worker": "w1", "lease_seconds": 1}})
	if r.Status != 201 {
		t.Fatalf("register: %d %s", r.Status, r.Raw)
	}
	fmt.Printf("claimed %s %d\n", str(r.Body, "id"), num(r.Body, "claim", "lease", "token"))
	time.Sleep(300 * time.Millisecond) // stopped here
	b := s.do(t, "POST", "/v1/operations/"+str(r.Body, "id")+"/begin",
		map[string]any{"lease_token": num(r.Body, "claim", "lease", "token")})
	fmt.Printf("begin %d %s\n", b.Status, str(b.Body, "code"))
}

// TestFaults_Kill9ThenAuditVerify: the server killed with SIGKILL in the
// middle of writes leaves an audit trail that `handoff audit verify --db`
// accepts.
func TestFaults_Kill9ThenAuditVerify(t *testing.T) {
	env := baseEnv(storetest.URL(t))
	out, err := cli(t, env, "token", "create", "--namespace", "campaigns", "--name", "kill9")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	p := launchProc(t, env)
	if err := p.ready(); err != nil {
		t.Fatal(err)
	}
	s := &server{URL: p.URL, Token: lines[len(lines)-1]}
	var wrote atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if !loadStep(s, fmt.Sprintf("k%d-%d", w, i)) {
					return // the server is gone
				}
				wrote.Add(1)
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	close(stop)
	wg.Wait()
	if wrote.Load() == 0 {
		t.Fatal("nothing was written before the kill")
	}
	if out, err := cli(t, env, "audit", "verify", "--db"); err != nil {
		t.Fatalf("audit verify --db after kill -9: %v\n%s", err, out)
	}
}

// loadStep runs one operation through register+claim, begin and settle
// with plain HTTP; false once the server stops answering.
func loadStep(s *server, key string) bool {
	call := func(path string, body map[string]any) (map[string]any, bool) {
		r, err := postJSON(s, path, body)
		return r, err == nil
	}
	reg, ok := call("/v1/operations", map[string]any{"key": key, "type": "crm.task.create",
		"content": map[string]any{"n": key}, "claim": map[string]any{"worker": "w", "lease_seconds": 30}})
	if !ok {
		return false
	}
	id, tok := str(reg, "id"), num(reg, "claim", "lease", "token")
	if _, ok := call("/v1/operations/"+id+"/begin", map[string]any{"lease_token": tok}); !ok {
		return false
	}
	_, ok = call("/v1/operations/"+id+"/settle", map[string]any{"lease_token": tok, "outcome": "completed",
		"result": map[string]any{"ref": "r_" + key}})
	return ok
}

// postJSON is server.call without a testing.TB, for goroutines that outlive
// the server on purpose.
func postJSON(s *server, path string, body map[string]any) (map[string]any, error) {
	raw := strings.NewReader(mustJSON(body))
	req, _ := http.NewRequest("POST", s.URL+path, raw)
	req.Header.Set("Authorization", "Bearer "+s.Token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := jsonDecode(resp, &out); err != nil {
		return nil, err
	}
	if resp.StatusCode >= 500 {
		return out, errors.New(resp.Status)
	}
	return out, nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func jsonDecode(resp *http.Response, out any) error {
	return json.NewDecoder(resp.Body).Decode(out)
}
