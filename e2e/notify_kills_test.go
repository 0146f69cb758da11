package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestNotifications_ThreeReplicasTwoKills: 300 desk entries registered over
// three replicas on one database, a replica killed with SIGKILL (and
// restarted) after the first and after the second hundred, while their
// deliveries are in flight: 300 distinct webhook-ids arrive, one for each
// operation. An id may arrive twice when a kill cut its attempt after the
// receiver took it (delivery is at least once, under one id); the count
// is logged.
func TestNotifications_ThreeReplicasTwoKills(t *testing.T) {
	needPostgres(t)
	rx, url := newReceiver(t)
	s := bootstrap(t, notifyEnv(url)...)
	servers := []*server{s, replicaOf(t, s), replicaOf(t, s)}
	procs := make([]*process, len(servers))
	for i, r := range servers {
		procs[i] = startProcess(t, r)
	}
	const n, phases = 300, 3
	for phase := range phases {
		if phase > 0 {
			victim := phase % len(servers)
			if err := procs[victim].cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = procs[victim].cmd.Wait()
			procs[victim] = startProcess(t, servers[victim])
		}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := phase*n/phases + w; i < (phase+1)*n/phases; i += 4 {
					awaitApproval(t, servers[i%len(servers)], fmt.Sprintf("k%d", i))
				}
			})
		}
		wg.Wait()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for rx.distinct() < n {
		select {
		case <-rx.got:
		case <-ctx.Done():
			t.Fatalf("%d of %d notifications arrived", rx.distinct(), n)
		}
	}
	time.Sleep(time.Second) // a late second delivery of an id would show here
	rx.mu.Lock()
	defer rx.mu.Unlock()
	ops := map[string]bool{}
	again := 0
	for id, k := range rx.seen {
		again += k - 1
		ops[rx.ops[id]] = true
	}
	t.Logf("%d desk entries over 3 replicas and 2 kills: %d distinct webhook-ids for %d operations (%d ids delivered again)",
		n, len(rx.seen), len(ops), again)
	if len(rx.seen) != n || len(ops) != n {
		t.Fatalf("%d webhook-ids for %d operations, want %d and %d", len(rx.seen), len(ops), n, n)
	}
}
