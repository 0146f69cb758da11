package e2e

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// These tests carry PRODUCT.md's concurrency invariants. They run on SQLite
// too, but they count only on PostgreSQL (CI sets HANDOFF_TEST_POSTGRES).

func register(key string, claim bool) map[string]any {
	body := map[string]any{"key": key, "type": "crm.task.create", "content": map[string]any{"title": "Follow up", "owner": "u_9", "ref": key}}
	if claim {
		body["claim"] = map[string]any{"worker": "w", "lease_seconds": 30}
	}
	return body
}

// parallel runs f(i) for i in [0, n) at once and waits for all.
func parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(i)
		}()
	}
	close(start)
	wg.Wait()
}

func TestConcurrentRegistrationsOfOneKey(t *testing.T) {
	s := startServer(t)
	results := make([]response, 50)
	parallel(50, func(i int) { results[i] = s.do(t, "POST", "/v1/operations", register("evt_1:task", true)) })
	created, claims, ids := 0, 0, map[string]bool{}
	for _, r := range results {
		switch r.Status {
		case 201:
			created++
		case 200:
			if r.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("replay without Idempotent-Replayed: %s", r.Raw)
			}
		default:
			t.Fatalf("registration answered %d: %s", r.Status, r.Raw)
		}
		ids[str(r.Body, "id")] = true
		if dig(r.Body, "claim") != nil {
			claims++
		} else if str(r.Body, "claim_refused", "reason") != "in_progress" {
			t.Errorf("a refused claim should say in_progress: %s", r.Raw)
		}
	}
	if created != 1 || claims != 1 || len(ids) != 1 {
		t.Fatalf("created=%d claims=%d ids=%d, want one of each", created, claims, len(ids))
	}
	list := s.do(t, "GET", "/v1/operations?key=evt_1:task", nil)
	if items, _ := list.Body["items"].([]any); len(items) != 1 {
		t.Fatalf("the key has %d operations: %s", len(items), list.Raw)
	}
}

func TestConcurrentClaimsHaveOneWinner(t *testing.T) {
	s := startServer(t)
	id := str(s.do(t, "POST", "/v1/operations", register("evt_2:task", false)).Body, "id")
	results := make([]response, 20)
	parallel(20, func(i int) {
		results[i] = s.do(t, "POST", "/v1/operations/"+id+"/claim", map[string]any{"worker": fmt.Sprintf("w%d", i)})
	})
	winners := 0
	for _, r := range results {
		switch {
		case r.Status == 200:
			winners++
			if num(r.Body, "lease", "token") != 1 {
				t.Errorf("the first claim's token should be 1: %s", r.Raw)
			}
		case r.Status == 409 && str(r.Body, "code") == "not_claimable" && str(r.Body, "reason") == "in_progress":
		default:
			t.Errorf("claim answered %d: %s", r.Status, r.Raw)
		}
	}
	if winners != 1 {
		t.Fatalf("%d claims won, want exactly 1", winners)
	}
}

func TestReclaimFencesTheOldToken(t *testing.T) {
	s := startServer(t)
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_3:task", "type": "crm.task.create",
		"content": map[string]any{"t": 1}, "claim": map[string]any{"worker": "slow", "lease_seconds": 1}})
	id, old := str(r.Body, "id"), num(r.Body, "claim", "lease", "token")
	time.Sleep(1200 * time.Millisecond) // the lease runs out before begin: nothing was sent
	re := s.do(t, "POST", "/v1/operations/"+id+"/claim", map[string]any{"worker": "fast"})
	if re.Status != 200 || num(re.Body, "lease", "token") <= old {
		t.Fatalf("reclaim: %d %s", re.Status, re.Raw)
	}
	fresh := num(re.Body, "lease", "token")
	for _, step := range []struct {
		path string
		body map[string]any
	}{
		{"/begin", map[string]any{"lease_token": old}},
		{"/heartbeat", map[string]any{"lease_token": old, "lease_seconds": 30}},
		{"/settle", map[string]any{"lease_token": old, "outcome": "completed", "result": map[string]any{"ref": "x"}}},
	} {
		got := s.do(t, "POST", "/v1/operations/"+id+step.path, step.body)
		if got.Status != 409 || str(got.Body, "code") != "stale_lease" {
			t.Errorf("%s with the old token answered %d: %s", step.path, got.Status, got.Raw)
		}
	}
	if got := s.do(t, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": fresh}); got.Status != 200 {
		t.Fatalf("begin with the new token: %d %s", got.Status, got.Raw)
	}
}

func TestLeaseExpiringAfterBeginIsUnknownForever(t *testing.T) {
	s := startServer(t)
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_4:task", "type": "crm.task.create",
		"content": map[string]any{"t": 1}, "claim": map[string]any{"worker": "lost", "lease_seconds": 1}})
	id, token := str(r.Body, "id"), num(r.Body, "claim", "lease", "token")
	if b := s.do(t, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": token}); b.Status != 200 {
		t.Fatalf("begin: %d %s", b.Status, b.Raw)
	}
	// Wait for the sweeper (every 100ms) to see the expiry by itself.
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := s.do(t, "GET", "/v1/operations/"+id, nil)
		if str(got.Body, "state") == "unknown_outcome" {
			if str(got.Body, "last_error", "code") != "lease_expired" {
				t.Errorf("last_error: %s", got.Raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %s after the lease expired", str(got.Body, "state"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	for range 3 {
		c := s.do(t, "POST", "/v1/operations/"+id+"/claim", map[string]any{"worker": "again"})
		if c.Status != 409 || str(c.Body, "reason") != "handed_off" {
			t.Fatalf("claim after unknown outcome: %d %s", c.Status, c.Raw)
		}
		p := s.do(t, "POST", "/v1/claims", map[string]any{"worker": "puller", "limit": 10})
		if claims, _ := p.Body["claims"].([]any); p.Status != 200 || len(claims) != 0 {
			t.Fatalf("pull after unknown outcome: %d %s", p.Status, p.Raw)
		}
	}
}

func TestPullingWorkersNeverShareAnOperation(t *testing.T) {
	s := startServer(t)
	const n = 120
	parallel(8, func(w int) {
		for i := w; i < n; i += 8 {
			if r := s.do(t, "POST", "/v1/operations", register(fmt.Sprintf("evt_p%d:task", i), false)); r.Status != 201 {
				t.Errorf("register: %d %s", r.Status, r.Raw)
			}
		}
	})
	var mu sync.Mutex
	seen := map[string]string{}
	parallel(4, func(w int) {
		worker := fmt.Sprintf("puller-%d", w)
		for {
			r := s.do(t, "POST", "/v1/claims", map[string]any{"worker": worker, "limit": 7, "lease_seconds": 60})
			claims, _ := r.Body["claims"].([]any)
			if r.Status != 200 || len(claims) == 0 {
				return
			}
			mu.Lock()
			for _, c := range claims {
				id := str(c.(map[string]any), "operation", "id")
				if prev, dup := seen[id]; dup {
					t.Errorf("%s was given to %s and %s", id, prev, worker)
				}
				seen[id] = worker
			}
			mu.Unlock()
		}
	})
	if len(seen) != n {
		t.Fatalf("%d operations were claimed, want %d", len(seen), n)
	}
}
