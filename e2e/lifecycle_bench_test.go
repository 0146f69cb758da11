package e2e

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkLifecycle drives whole lifecycles through HTTP against the real
// binary, each call a durable, audited commit: register with an inline
// claim that begins at once → settle completed (two calls, as client.Do),
// register with an inline claim → begin → settle, or register, then a
// separate claim → begin → settle. Run it on PostgreSQL beside the peers in
// bench/peers and compare lifecycles/s (scripts/bench-rounds does both):
//
//	HANDOFF_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//	  go test -run XXX -bench Lifecycle -benchtime 15s -cpu 8 ./e2e/
//
// -cpu sets the number of concurrent clients (RunParallel runs GOMAXPROCS
// goroutines), matching the peers' -c.
func BenchmarkLifecycle(b *testing.B) {
	for _, shape := range []lifecycleShape{{"register+claim+begin", true, true}, {"register+claim", true, false},
		{"register,claim", false, false}} {
		b.Run(shape.name, func(b *testing.B) {
			s := startServer(b)
			var seq atomic.Int64
			start := time.Now()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					lifecycle(b, s, fmt.Sprintf("evt_%d:task", seq.Add(1)), shape)
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "lifecycles/s")
		})
	}
}

// lifecycleShape is how a lifecycle is sent: the claim inline in the
// registration or not, and beginning at once (claim.begin) or not.
type lifecycleShape struct {
	name          string
	inline, begin bool
}

func lifecycle(b *testing.B, s *server, key string, shape lifecycleShape) {
	body := map[string]any{"key": key, "type": "crm.task.create", "content": map[string]any{"title": "Follow up", "owner": "u_9", "ref": key}}
	claim := map[string]any{"worker": "bench", "lease_seconds": 30, "begin": shape.begin}
	var id string
	var token int64
	if shape.inline {
		body["claim"] = claim
		r := s.do(b, "POST", "/v1/operations", body)
		id, token = str(r.Body, "id"), num(r.Body, "claim", "lease", "token")
	} else {
		id = str(s.do(b, "POST", "/v1/operations", body).Body, "id")
		token = num(s.do(b, "POST", "/v1/operations/"+id+"/claim", claim).Body, "lease", "token")
	}
	if !shape.begin {
		if r := s.do(b, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": token}); r.Status != 200 {
			b.Fatalf("begin: %d %s", r.Status, r.Raw)
		}
	}
	r := s.do(b, "POST", "/v1/operations/"+id+"/settle", map[string]any{"lease_token": token, "outcome": "completed",
		"result": map[string]any{"ref": "crm_" + key}})
	if r.Status != 200 || str(r.Body, "state") != "completed" {
		b.Fatalf("settle: %d %s", r.Status, r.Raw)
	}
}
