package web

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// BenchmarkDeskOperationsSearch times the Operations page — every state,
// its search and its filters — on 100,000 operations spread over every
// state (seedDesk), calling the handler in-process so the numbers are
// server time alone. The target is a p95 under 50 ms on PostgreSQL:
//
//	HANDOFF_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//	  go test -run XXX -bench DeskOperationsSearch -benchtime 200x ./web/
//
// Each case reports the median and the 95th percentile of its calls. On
// SQLite it runs on 10,000 operations.
func BenchmarkDeskOperationsSearch(b *testing.B) {
	d := newDesk(b)
	total := 10_000
	if storetest.Postgres() {
		total = 100_000
	}
	all := seedDesk(b, d, total, total/10)
	pick := func(i int) int { return (i * 7919) % len(all.ops) }
	claimed := func(i int) int { // an operation with an attempt
		for j := pick(i); ; j = (j + 1) % len(all.ops) {
			if all.attempts[j] != "" {
				return j
			}
		}
	}
	settled := func(i int) int { // an operation with a result ref
		for j := pick(i); ; j = (j + 1) % len(all.ops) {
			if all.ops[j].Result != nil {
				return j
			}
		}
	}
	ops := "/desk/operations"
	cases := []struct {
		name string
		url  func(i int) string
		rows int // rows expected on the first page; 0: some
	}{
		{"every_state", func(int) string { return ops }, queuePageSize},
		{"search_provider_key", func(i int) string { return ops + "?q=" + url.QueryEscape(all.ops[pick(i)].ProviderKey) }, 1},
		{"search_event_id", func(i int) string { return ops + "?q=" + url.QueryEscape(all.ops[pick(i)].EventID) }, 1},
		{"search_result_ref", func(i int) string { return ops + "?q=" + url.QueryEscape(all.ops[settled(i)].Result.Ref) }, 0},
		{"search_operation_id", func(i int) string { return ops + "?q=" + all.ops[pick(i)].ID }, 1},
		{"search_attempt_id", func(i int) string { return ops + "?q=" + all.attempts[claimed(i)] }, 1},
		{"search_content_text", func(i int) string {
			return ops + "?q=" + url.QueryEscape("ORDER #"+all.ops[pick(i)].EventID[len("evt_"):])
		}, 1},
		{"search_content_common", func(int) string { return ops + "?q=call+back" }, queuePageSize},
		{"search_error_text", func(int) string { return ops + "?q=read+timeout" }, queuePageSize},
		{"search_error_rare", func(i int) string { return ops + "?q=" + url.QueryEscape("owner u_"+strconv.Itoa(i%97)+" does") }, 0},
		{"filter_state_type", func(i int) string {
			return ops + "?type=coupon.issue&state=" + domain.States[i%len(domain.States)].String()
		}, queuePageSize},
		{"search_in_state", func(i int) string {
			return ops + "?q=call+back&state=" + domain.States[i%len(domain.States)].String()
		}, queuePageSize},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			d.timeCalls(b, func(i int) *http.Request {
				return request("GET", c.url(i), "", "HX-Request", "true") // live search asks for the fragment
			}, func(i int, w *httptest.ResponseRecorder) {
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d", c.url(i), w.Code)
				}
				if i == 0 {
					if n := len(d.parse(w.Body.String()).all("queue-row")); n != c.rows && (c.rows > 0 || n == 0) {
						b.Fatalf("%s: %d rows, want %d", c.url(i), n, c.rows)
					}
				}
			})
		})
	}
}

// BenchmarkDeskBulkPreview times the bulk preview of 1,000 desk items (the
// most a batch takes) on the same 100,000 operations: every item loaded,
// decided and listed. The target is under 500 ms on PostgreSQL:
//
//	HANDOFF_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//	  go test -run XXX -bench DeskBulkPreview -benchtime 20x ./web/
//
// On SQLite it runs on 10,000 operations.
func BenchmarkDeskBulkPreview(b *testing.B) {
	d := newDesk(b)
	total := 10_000
	if storetest.Postgres() {
		total = 100_000
	}
	desk := seedDesk(b, d, total, total/10).desk[:domain.MaxBatch]
	form := url.Values{"decision": {"cancel"}, "reason": {"the campaign was called off"}}
	for _, op := range desk {
		form.Add("item", op.ID+":"+strconv.FormatInt(op.Version, 10))
	}
	body := form.Encode()
	d.timeCalls(b, func(int) *http.Request {
		return request("POST", "/desk/batch/preview", body, "Content-Type", "application/x-www-form-urlencoded")
	}, func(i int, w *httptest.ResponseRecorder) {
		if w.Code != http.StatusOK {
			b.Fatalf("preview: %d\n%s", w.Code, w.Body.String())
		}
		if i == 0 {
			p := d.parse(w.Body.String())
			if n := len(p.all("batch-row")); n != len(desk) {
				b.Fatalf("preview: %d rows, want %d: %s", n, len(desk), p.text("batch-summary"))
			}
		}
	})
}

// request is a request from Ada.
func request(method, target, body string, headers ...string) *http.Request {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("X-Test-Person", "ada")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

// timeCalls serves the request call makes b.N times, times each answer,
// checks it with check, and reports the median and the 95th percentile.
func (d *desk) timeCalls(b *testing.B, call func(i int) *http.Request, check func(i int, w *httptest.ResponseRecorder)) {
	took := make([]time.Duration, 0, b.N)
	for i := 0; b.Loop(); i++ {
		req := call(i)
		w := httptest.NewRecorder()
		start := time.Now()
		d.engine.ServeHTTP(w, req)
		took = append(took, time.Since(start))
		check(i, w)
	}
	median, p95 := percentile(took, 50), percentile(took, 95)
	b.ReportMetric(ms(median), "median-ms")
	b.ReportMetric(ms(p95), "p95-ms")
	b.Logf("%d calls, median %v, p95 %v", len(took), median, p95)
}
