package web

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkDeskOverview times the overview page — its one snapshot of
// figures and charts — on the queue benchmark's 100,000 operations, 10,000
// of them in the desk, in-process so the numbers are server time alone:
//
//	HANDOFF_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//	  go test -run XXX -bench DeskOverview -benchtime 50x ./web/
func BenchmarkDeskOverview(b *testing.B) {
	d := newDesk(b)
	seedDesk(b, d, 100_000, 10_000)
	for _, path := range []string{"/desk", "/desk?type=coupon.issue"} {
		b.Run(path, func(b *testing.B) {
			took := make([]time.Duration, 0, b.N)
			for b.Loop() {
				req := httptest.NewRequest("GET", path, nil)
				req.Header.Set("X-Test-Person", "ada")
				req.Header.Set("HX-Request", "true") // the refresh asks for the body
				w := httptest.NewRecorder()
				start := time.Now()
				d.engine.ServeHTTP(w, req)
				took = append(took, time.Since(start))
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d", path, w.Code)
				}
			}
			median, p95 := percentile(took, 50), percentile(took, 95)
			b.ReportMetric(ms(median), "median-ms")
			b.ReportMetric(ms(p95), "p95-ms")
			b.Logf("%s: %d calls, median %v, p95 %v", path, len(took), median, p95)
		})
	}
}
