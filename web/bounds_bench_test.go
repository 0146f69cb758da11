package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// cpuTime is the process's user and system CPU time so far: on a shared
// machine wall time measures the neighbours as much as the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLargeContent registers 64 KiB contents of the costliest shapes
// through the Ledger, and renders the operation and approvals pages for
// them, reporting CPU milliseconds per call (targets: register < 20 ms,
// each page < 200 ms):
//
//	go test -run XXX -bench LargeContent -benchtime 50x ./web/
func BenchmarkLargeContent(b *testing.B) {
	for name, content := range bigContents() {
		b.Run("register/"+name, func(b *testing.B) {
			d := newDesk(b)
			start := cpuTime()
			for i := 0; b.Loop(); i++ {
				_, err := d.ledger.Workflow.Register(context.Background(), testWorkflow, domain.Registration{
					Key: "big:" + strconv.Itoa(i), Type: "coupon.issue", Content: json.RawMessage(content(strconv.Itoa(i)))})
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
		d := newDesk(b)
		res, err := d.ledger.Workflow.Register(context.Background(), testWorkflow, domain.Registration{Key: "big", Type: "coupon.issue",
			Content: json.RawMessage(content("one"))})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.ledger.Desk.Revise(context.Background(), testPeople["ada"], res.Operation.ID, domain.Revise{
			ExpectedVersion: res.Operation.Version, Reason: "again", Content: json.RawMessage(content("two"))}); err != nil {
			b.Fatal(err)
		}
		for page, target := range map[string]string{"operation": "/desk/operations/" + res.Operation.ID, "approvals": "/desk/approvals"} {
			b.Run(page+"/"+name, func(b *testing.B) {
				start := cpuTime()
				size := 0
				for b.Loop() {
					req := httptest.NewRequest("GET", target, nil)
					req.Header.Set("X-Test-Person", "bob")
					w := httptest.NewRecorder()
					d.engine.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("%s: %d", target, w.Code)
					}
					size = w.Body.Len()
				}
				b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(size), "page-bytes")
			})
		}
	}
}
