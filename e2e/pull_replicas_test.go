package e2e

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/opshandoff/handoff/store/storetest"
)

// TestPullingWorkersOnThreeReplicasNeverShareAnOperation: 3,000 operations
// on one PostgreSQL database, pulled (POST /v1/claims) by two workers on
// each of three replicas at once: every operation is handed out, and none
// twice.
func TestPullingWorkersOnThreeReplicasNeverShareAnOperation(t *testing.T) {
	needPostgres(t)
	env := baseEnv(storetest.URL(t))
	first := launchProc(t, env)
	if err := first.ready(); err != nil { // the first one migrates
		t.Fatal(err)
	}
	out, err := cli(t, env, "token", "create", "--namespace", "campaigns", "--name", "pullers")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	servers := []*server{{URL: first.URL, Token: lines[len(lines)-1]}}
	for range 2 {
		p := launchProc(t, env)
		if err := p.ready(); err != nil {
			t.Fatal(err)
		}
		servers = append(servers, &server{URL: p.URL, Token: servers[0].Token})
	}

	const n = 3000
	parallel(12, func(w int) {
		for i := w; i < n; i += 12 {
			if r := servers[w%3].do(t, "POST", "/v1/operations", register(fmt.Sprintf("evt_r%d:task", i), false)); r.Status != 201 {
				t.Errorf("register: %d %s", r.Status, r.Raw)
			}
		}
	})
	var mu sync.Mutex
	seen := map[string]string{}
	twice := 0
	parallel(6, func(w int) {
		worker := fmt.Sprintf("puller-%d", w)
		for {
			r := servers[w%3].do(t, "POST", "/v1/claims", map[string]any{"worker": worker, "limit": 10, "lease_seconds": 300})
			claims, _ := r.Body["claims"].([]any)
			if r.Status != 200 || len(claims) == 0 {
				return
			}
			mu.Lock()
			for _, c := range claims {
				id := str(c.(map[string]any), "operation", "id")
				if prev, dup := seen[id]; dup {
					twice++
					t.Errorf("%s was given to %s and %s", id, prev, worker)
				}
				seen[id] = worker
			}
			mu.Unlock()
		}
	})
	t.Logf("%d operations pulled by 6 workers on 3 replicas, %d handed out twice", len(seen), twice)
	if len(seen) != n {
		t.Fatalf("%d operations were claimed, want %d", len(seen), n)
	}
}
