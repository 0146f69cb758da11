package web

import (
	"context"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// BenchmarkDeskQueueCount times the count behind "select all N matching"
// — one count query, run with every queue page that has more than one
// page — beside the page's own list query, on BenchmarkDeskQueue's
// 100,000 operations of which 10,000 are in the desk:
//
//	HANDOFF_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//	  go test -run XXX -bench DeskQueueCount -benchtime 30x ./web/
func BenchmarkDeskQueueCount(b *testing.B) {
	d := newDesk(b)
	seedDesk(b, d, 100_000, 10_000)
	ada := testPeople["ada"]
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    domain.ListQuery
		want int
	}{
		{"desk", domain.ListQuery{States: domain.DeskStates}, 10_000},
		{"error_text", domain.ListQuery{States: domain.DeskStates, Text: "read timeout"}, 5_000},
		{"type_age", domain.ListQuery{States: domain.DeskStates, Types: []string{"coupon.issue"}, InDeskBefore: time.Now().Add(-7 * 24 * time.Hour)}, -1},
	} {
		for _, what := range []string{"count", "page"} {
			b.Run(c.name+"_"+what, func(b *testing.B) {
				took := make([]time.Duration, 0, b.N)
				for b.Loop() {
					start := time.Now()
					var err error
					var n int
					if what == "count" {
						n, err = d.ledger.Desk.DeskQueueCount(ctx, ada, c.q, "", 0)
					} else {
						q := c.q
						q.Limit = queuePageSize
						_, _, err = d.ledger.Desk.DeskQueue(ctx, ada, q, "")
						n = c.want
					}
					took = append(took, time.Since(start))
					if err != nil || (c.want >= 0 && n != c.want) {
						b.Fatalf("%s: %d, %v; want %d", c.name, n, err, c.want)
					}
				}
				b.ReportMetric(ms(percentile(took, 50)), "median-ms")
				b.ReportMetric(ms(percentile(took, 95)), "p95-ms")
			})
		}
	}
}
