package chaos

import (
	"context"
	"flag"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/sandbox"
	"github.com/opshandoff/handoff/store/storetest"
)

var (
	duration = flag.Duration("chaos.duration", 30*time.Second, "how long the workload and the nemesis run")
	outDir   = flag.String("chaos.out", "", "where a failing run saves its history (default: a new temporary directory)")
	clients  = flag.Int("chaos.clients", 8, "client.Do workers; two raw-call workers and two pausing workers run beside them")
	nemesis  = flag.Duration("chaos.nemesis", 2500*time.Millisecond, "the pause between two faults")
)

// TestChaos_HistoriesUnderFaults runs the workload against three replicas
// while the nemesis kills them and their database connections, then checks
// the history: linearizable per key, and the direct checks of check_test.go.
func TestChaos_HistoriesUnderFaults(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("the history check runs replicas, which need PostgreSQL: set " + storetest.EnvPostgres)
	}
	began := time.Now()
	c := startCluster(t, 3)
	sb, err := sandbox.New(sandbox.Config{Idempotency: sandbox.IdempotencyNone, Hold: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// The sandbox executes every request it gets, so that each send is
	// counted, whatever the card says the real provider would deduplicate.
	provider := httptest.NewServer(sb.Handler())
	t.Cleanup(provider.Close)
	h := newHistory()
	loadBegan := time.Now()
	w := &workload{c: c, h: h, provider: sandbox.NewClient(provider.URL, 1500*time.Millisecond),
		until: time.Now().Add(*duration)}

	ctx, stop := context.WithDeadline(context.Background(), w.until)
	defer stop()
	var st nemesisStats
	var wg sync.WaitGroup
	wg.Go(func() { c.runNemesis(ctx, *nemesis, &st) })
	n := *clients
	for i := range n {
		wg.Go(func() { w.doClient(i, c.replicas[i%len(c.replicas)]) })
	}
	for i := range 2 {
		wg.Go(func() { w.rawClient(n+i, c.replicas[i%len(c.replicas)]) })
	}
	for i := range 2 { // clients n+2, n+3, and n+4, n+5 for the workers that take over
		wg.Go(func() { w.pausingWorker(n + 2 + i) })
	}
	wg.Wait()
	loadEnded := time.Now()

	r := check(t, c, h, sb)
	t.Logf("%v of load: %d calls (%d lost, %d never reached a replica), %d keys, %d completed, %d provider executions",
		loadEnded.Sub(loadBegan).Round(time.Second), r.calls, r.lost, r.refused, r.keys, r.completed, r.executions)
	t.Logf("%d settles acknowledged, %d of them lost; %d keys executed twice or more without a recorded reason, %d re-sent for one",
		r.acked, r.lostAcked, r.doubles, r.resent)
	t.Logf("nemesis: %d kill -9 and restarts, %d database connections terminated, %d workers paused past their lease (%d of their calls fenced)",
		st.kills.Load(), st.backends.Load(), w.paused.Load(), w.fenced.Load())
	t.Logf("checked in %v; the whole run took %v", time.Since(loadEnded).Round(time.Millisecond), time.Since(began).Round(time.Second))
	if st.kills.Load() == 0 || st.backends.Load() == 0 || w.paused.Load() == 0 || r.completed == 0 {
		t.Errorf("the run did not bite: %d kills, %d connections terminated, %d pauses, %d completed",
			st.kills.Load(), st.backends.Load(), w.paused.Load(), r.completed)
	}
	if w.paused.Load() > 0 && w.fenced.Load() == 0 {
		t.Errorf("no call of the %d paused workers was refused stale_lease", w.paused.Load())
	}
	if t.Failed() {
		save(t, c, h, r)
	}
}

// save writes the failing run's history, porcupine's view of it and the
// replicas' logs, and prints where.
func save(t *testing.T, c *cluster, h *history, r report) {
	dir := *outDir
	var err error
	if dir == "" {
		dir, err = os.MkdirTemp("", "handoff-chaos-")
	} else {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		t.Logf("could not save the history: %v", err)
		return
	}
	if err := writeJSONL(filepath.Join(dir, "history.jsonl"), h.snapshot()); err != nil {
		t.Logf("history.jsonl: %v", err)
	}
	if r.visualize != nil {
		if err := r.visualize(filepath.Join(dir, "linearizability.html")); err != nil {
			t.Logf("linearizability.html: %v", err)
		}
	}
	for i, rep := range c.replicas {
		_ = os.WriteFile(filepath.Join(dir, "replica-"+string(rune('a'+i))+".log"), []byte(rep.logs.String()), 0o644)
	}
	t.Logf("the failing run's history is saved in %s (history.jsonl, linearizability.html, replica logs)", dir)
}
