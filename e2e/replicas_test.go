package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/client"
)

// TestFaults_ThreeReplicasUnderConnectionKills: three `handoff serve` on one
// PostgreSQL database, each with its group commit, workers on every replica
// racing for the same keys, and every database connection of every replica
// killed every 50 ms. Afterwards: every settle a worker saw acknowledged is
// completed in the database; no provider call ran twice; a worker whose
// lease ran out was fenced on another replica; each key has one row; and
// `handoff audit verify --db` accepts the trail.
func TestFaults_ThreeReplicasUnderConnectionKills(t *testing.T) {
	needPostgres(t)
	app, dbURL := namedDatabase(t)
	env := baseEnv(dbURL)
	replicas := make([]*proc, 3)
	replicas[0] = launchProc(t, env)
	if err := replicas[0].ready(); err != nil { // the first one migrates
		t.Fatal(err)
	}
	out, err := cli(t, env, "token", "create", "--namespace", "campaigns", "--name", "replicas")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	replicas[1], replicas[2] = launchProc(t, env), launchProc(t, env)
	for _, p := range replicas[1:] {
		if err := p.ready(); err != nil {
			t.Fatal(err)
		}
	}

	watch := &statusWatch{next: &http.Transport{MaxIdleConnsPerHost: 64}}
	clients := make([]*client.Client, len(replicas))
	servers := make([]*server, len(replicas))
	for i, p := range replicas {
		clients[i] = client.New(p.URL, token)
		clients[i].HTTP = &http.Client{Transport: watch, Timeout: 30 * time.Second}
		servers[i] = &server{URL: p.URL, Token: token}
	}

	stopKills := killBackends(t, app, 50*time.Millisecond, watch.answered).stop
	var mu sync.Mutex
	calls := map[string]int{}   // key → provider calls, as the workers saw them
	done := map[string]string{} // key → ref of every Do a worker saw complete
	deadline := time.Now().Add(6 * time.Second)
	const groups = 3 // each group is one worker per replica, on the same keys
	var fenced atomic.Int64
	var fenceErrs []string
	// The kills stop with the load's deadline, so calls in flight then
	// finish against a database that answers.
	var kills int64
	stopped := make(chan struct{})
	time.AfterFunc(time.Until(deadline), func() { kills = stopKills(); close(stopped) })
	began := time.Now()
	parallel(groups*len(replicas)+2, func(w int) {
		if w >= groups*len(replicas) { // two fencing probes beside the load
			for i := 0; time.Now().Before(deadline); i++ {
				if msg := fenceProbe(servers, fmt.Sprintf("fence%d-%d", w, i)); msg == "" {
					fenced.Add(1)
				} else if msg != "skip" {
					mu.Lock()
					fenceErrs = append(fenceErrs, msg)
					mu.Unlock()
				}
			}
			return
		}
		c := clients[w%len(replicas)]
		for i := 0; time.Now().Before(deadline); i++ {
			key := fmt.Sprintf("g%d-%d", w/len(replicas), i)
			fn := func(context.Context, client.Claim) (client.Result, error) {
				mu.Lock()
				calls[key]++
				mu.Unlock()
				return client.Result{Ref: "ref_" + key}, nil
			}
			req := client.Request{Key: key, Type: "email.send", Content: map[string]any{"n": key},
				Worker: fmt.Sprintf("w%d", w), LeaseSeconds: 30}
			for try := 0; try < 5; try++ {
				op, err := c.Do(context.Background(), req, fn)
				if err == nil && op.State == "completed" {
					mu.Lock()
					done[key] = op.Result.Ref
					mu.Unlock()
					break
				}
				if client.IsCode(err, "not_claimable") {
					break // another replica's worker has it
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	})
	<-stopped
	t.Logf("load ran %v", time.Since(began).Round(time.Millisecond))

	watch.mu.Lock()
	bad, n503 := watch.bad, watch.n503
	watch.mu.Unlock()
	t.Logf("%d backends killed, %d keys completed, %d answers 503, %d workers fenced", kills, len(done), n503, fenced.Load())
	if len(bad) > 0 {
		t.Errorf("%d answers were 5xx other than 503 with Retry-After, e.g. %v", len(bad), bad[:min(len(bad), 10)])
	}
	for _, msg := range fenceErrs {
		t.Error(msg)
	}
	if kills == 0 || n503 == 0 || len(done) == 0 || fenced.Load() == 0 {
		t.Fatalf("the test did not bite: %d kills, %d answers 503, %d completed, %d fenced", kills, n503, len(done), fenced.Load())
	}
	for key, n := range calls {
		if n > 1 {
			t.Errorf("the provider was called %d times for %s", n, key)
		}
	}

	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for key, ref := range done {
		var state, got string
		var n int
		err := db.QueryRow(`SELECT min(state), min(coalesce(result_ref, '')), count(*) FROM operations
			WHERE namespace = 'campaigns' AND key = $1`, key).Scan(&state, &got, &n)
		if err != nil || n != 1 || state != "completed" || got != ref {
			t.Errorf("acknowledged %s (ref %s) is in the database as %d rows, %q %q (%v)", key, ref, n, state, got, err)
		}
	}
	var dupKeys, begunTwice int
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT 1 FROM operations GROUP BY namespace, key HAVING count(*) > 1) d`).
		Scan(&dupKeys); err != nil || dupKeys != 0 {
		t.Errorf("%d keys have more than one row (%v)", dupKeys, err)
	}
	// Begun twice with the load's 30 s leases would be a second execution
	// the protocol did not permit.
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT 1 FROM attempts a JOIN operations o ON o.id = a.operation_id
		WHERE o.key LIKE 'g%' AND a.began_at IS NOT NULL GROUP BY a.operation_id HAVING count(*) > 1) d`).
		Scan(&begunTwice); err != nil || begunTwice != 0 {
		t.Errorf("%d operations were begun by two attempts (%v)", begunTwice, err)
	}
	t.Logf("checked the database after %v", time.Since(began).Round(time.Millisecond))
	if out, err := cli(t, env, "audit", "verify", "--db"); err != nil {
		t.Fatalf("audit verify --db after three replicas under kills: %v\n%s", err, out)
	}
}

// fenceProbe: a worker claims key on one replica with a 1 s lease and lets
// it run out; another worker claims on a second replica; the first worker's
// begin on the third replica must be refused stale_lease, and the second
// worker must begin and settle. "" when all that held, "skip" when a lost
// answer made the probe unusable, else what broke.
func fenceProbe(s []*server, key string) string {
	var reg map[string]any
	var err error
	for try := 0; try < 20; try++ {
		if reg, err = postJSON(s[0], "/v1/operations", map[string]any{"key": key, "type": "crm.task.create",
			"content": map[string]any{"k": key}, "claim": map[string]any{"worker": "slow", "lease_seconds": 1}}); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil || dig(reg, "claim") == nil {
		return "skip" // the claim's answer was lost: its lease is unknown to us
	}
	id, old := str(reg, "id"), num(reg, "claim", "lease", "token")
	time.Sleep(1200 * time.Millisecond)
	var fresh int64 = -1
	for until := time.Now().Add(10 * time.Second); fresh < 0 && time.Now().Before(until); time.Sleep(50 * time.Millisecond) {
		r, err := postJSON(s[1], "/v1/operations/"+id+"/claim", map[string]any{"worker": "fast", "lease_seconds": 30})
		if err == nil && r["lease"] != nil {
			fresh = num(r, "lease", "token")
		} else if err == nil && str(r, "reason") == "in_progress" {
			return "skip" // a claim whose answer was lost holds it
		}
	}
	if fresh < 0 {
		return "skip"
	}
	if fresh <= old {
		return fmt.Sprintf("%s: the second claim's token %d is not above the first's %d", key, fresh, old)
	}
	// postJSON's error is a 5xx: the database was away; send again.
	call := func(srv *server, path string, body map[string]any) map[string]any {
		for try := 0; try < 50; try++ {
			if r, err := postJSON(srv, "/v1/operations/"+id+path, body); err == nil {
				return r
			}
			time.Sleep(20 * time.Millisecond)
		}
		return nil
	}
	brief := func(r map[string]any) string {
		return fmt.Sprintf("state %q code %q version %d", str(r, "state"), str(r, "code"), num(r, "version"))
	}
	if r := call(s[2], "/begin", map[string]any{"lease_token": old}); str(r, "code") != "stale_lease" {
		return fmt.Sprintf("%s: begin with the lapsed token %d was not fenced: %s", key, old, brief(r))
	}
	if r := call(s[2], "/begin", map[string]any{"lease_token": fresh}); str(r, "state") != "action_pending" {
		return fmt.Sprintf("%s: the live holder could not begin: %s", key, brief(r))
	}
	if r := call(s[0], "/settle", map[string]any{"lease_token": old, "outcome": "completed",
		"result": map[string]any{"ref": "stale"}}); str(r, "code") != "stale_lease" {
		return fmt.Sprintf("%s: settle with the lapsed token %d was not fenced: %s", key, old, brief(r))
	}
	if r := call(s[1], "/settle", map[string]any{"lease_token": fresh, "outcome": "completed",
		"result": map[string]any{"ref": "fresh"}}); str(r, "state") != "completed" || str(r, "result", "ref") != "fresh" {
		return fmt.Sprintf("%s: the live holder could not settle: %s", key, brief(r))
	}
	return ""
}
