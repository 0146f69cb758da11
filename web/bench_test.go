package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// BenchmarkDeskQueue times the queue page and the queue's live search on a
// database of 100,000 operations of which 10,000 are in the desk, calling
// the handlers in-process so the numbers are server time alone. Run it on
// PostgreSQL (seeding takes a while; -benchtime sets the calls per case):
//
//	HANDOFF_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable \
//	  go test -run XXX -bench DeskQueue -benchtime 200x ./web/
//
// Each case reports the median and the 95th percentile of its calls.
func BenchmarkDeskQueue(b *testing.B) {
	d := newDesk(b)
	desk := seedDesk(b, d, 100_000, 10_000).desk
	cases := []struct {
		name string
		url  func(i int) string
		rows int // rows expected on the page
	}{
		{"queue", func(int) string { return "/desk/queue" }, queuePageSize},
		{"search_provider_key", func(i int) string {
			return "/desk/queue?q=" + url.QueryEscape(desk[(i*7919)%len(desk)].ProviderKey)
		}, 1},
		{"search_error_text", func(int) string { return "/desk/queue?q=read+timeout" }, queuePageSize},
		{"filter_type_age", func(int) string { return "/desk/queue?type=coupon.issue&age=7d" }, queuePageSize},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			took := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				req := httptest.NewRequest("GET", c.url(i), nil)
				req.Header.Set("X-Test-Person", "ada")
				req.Header.Set("HX-Request", "true") // live search asks for the results fragment
				w := httptest.NewRecorder()
				start := time.Now()
				d.engine.ServeHTTP(w, req)
				took = append(took, time.Since(start))
				if w.Code != http.StatusOK {
					b.Fatalf("%s: %d", c.url(i), w.Code)
				}
				if i == 0 {
					if n := len(d.parse(w.Body.String()).all("queue-row")); n != c.rows {
						b.Fatalf("%s: %d rows, want %d", c.url(i), n, c.rows)
					}
				}
			}
			median, p95 := percentile(took, 50), percentile(took, 95)
			b.ReportMetric(ms(median), "median-ms")
			b.ReportMetric(ms(p95), "p95-ms")
			b.Logf("%s: %d calls, median %v, p95 %v", c.name, len(took), median, p95)
		})
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// percentile is the p-th percentile of the durations (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(i-1, 0)]
}

// seeded is what seedDesk loaded: the desk's items, and every operation
// with the ID of its attempt ("" for one never claimed).
type seeded struct {
	desk     []domain.Operation
	ops      []domain.Operation
	attempts []string
}

// seedDesk loads total operations created over the last 30 days, inDesk of
// them in the desk (half unknown_outcome, half failed_terminal) and the rest
// in every other state: 2% each received, processing, action_pending,
// failed_retryable and awaiting_approval, 6% cancelled, the rest completed.
// Every operation that was claimed has its attempt, and every content a
// note naming an order of its own.
func seedDesk(b *testing.B, d *desk, total, inDesk int) seeded {
	b.Helper()
	return seedDeskEntering(b, d, total, inDesk, nil)
}

// deskEntry is how one of seedDeskEntering's desk items gets there: its
// type, and the error its attempt settles with — an unknown outcome after
// the provider call began, or a terminal failure before it.
type deskEntry struct {
	Type    string
	Unknown bool
	Error   domain.ErrorInfo
}

// seedDeskEntering is seedDesk, except that with enter set the n-th desk
// item is of enter(n)'s type and is loaded one step short of the desk —
// action_pending for an unknown outcome, processing for a failure, under a
// live lease — and then settled through the Ledger with enter(n)'s error,
// one write each in the order of n, so it enters the desk and joins its
// incident as a worker's settle does.
func seedDeskEntering(b *testing.B, d *desk, total, inDesk int, enter func(n int) deskEntry) seeded {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	now := time.Now().UTC()
	every := total / inDesk
	types := []string{"crm.task.create", "coupon.issue"}
	var batch []domain.Change
	var out seeded
	var entering []int // indexes in out.ops of the items to settle into the desk
	for i := range total {
		typ := types[(i/every)%len(types)]
		var entry deskEntry
		if enter != nil && i%every == 0 {
			entry = enter(len(entering))
			typ = entry.Type
		}
		card, _ := d.ledger.Cards.Get(typ)
		at := now.Add(-30 * 24 * time.Hour / time.Duration(total) * time.Duration(total-i)) // spread over 30 days
		env := domain.Env{Card: card, Now: at, Actor: testWorkflow, NewID: d.ledger.IDs.New}
		r := domain.Registration{Namespace: "campaigns", Key: fmt.Sprintf("evt_%06d:%s", i, typ), Type: typ,
			EventID: fmt.Sprintf("evt_%06d", i), CorrelationID: fmt.Sprintf("run-%d", i/10)}
		content := fmt.Sprintf(`{"n":%d,"owner":"u_%d","note":"call back about order #%06d"}`, i, i%97, i)
		ch, err := domain.NewOperation(r, []byte(content), false, env)
		if err != nil {
			b.Fatal(err)
		}
		op := &ch.Op
		op.Attempts, op.Version = 1, 4
		lease := func() {
			op.LeaseToken, op.Lease = 1, &domain.Lease{Token: 1, Worker: "w1", ExpiresAt: at.Add(5 * time.Minute)}
		}
		switch {
		case i%every == 0 && enter != nil:
			// The worker kept its lease alive until the provider answered.
			op.LeaseToken, op.Lease = 1, &domain.Lease{Token: 1, Worker: "w1", ExpiresAt: now.Add(time.Hour)}
			op.State, op.Version = domain.Processing, 2
			if entry.Unknown {
				op.State, op.Version, op.ProviderKeyFirstSentAt = domain.ActionPending, 3, &at
			}
			entering = append(entering, len(out.ops))
		case i%every == 0 && len(out.desk)%2 == 0:
			op.State, op.ProviderKeyFirstSentAt = domain.UnknownOutcome, &at
			op.LastError = &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout after 30s"}
		case i%every == 0:
			op.State = domain.FailedTerminal
			op.LastError = &domain.ErrorInfo{Class: domain.ClassValidation, Code: "422", Message: fmt.Sprintf("owner u_%d does not exist", i%97)}
		case i%50 == 1:
			op.State, op.Attempts, op.Version = domain.Received, 0, 1
		case i%50 == 2:
			op.State, op.Version = domain.Processing, 2
			lease()
		case i%50 == 3:
			op.State, op.Version, op.ProviderKeyFirstSentAt = domain.ActionPending, 3, &at
			lease()
		case i%50 == 4:
			next := at.Add(time.Minute)
			op.State, op.NextRetryAt = domain.FailedRetryable, &next
			op.LastError = &domain.ErrorInfo{Class: domain.ClassRateLimited, Code: "429", Message: "too many requests"}
		case i%50 == 5:
			op.State, op.Attempts, op.Version = domain.AwaitingApproval, 0, 1
		case i%50 >= 6 && i%50 <= 8:
			op.State = domain.Cancelled
		default:
			op.State, op.ProviderKeyFirstSentAt = domain.Completed, &at
			op.Result = &domain.Result{Ref: fmt.Sprintf("ref_%d", i)}
		}
		att := ""
		if op.Attempts > 0 {
			att = d.ledger.IDs.New("att")
			ch.Attempt = &domain.AttemptChange{New: true, Attempt: domain.Attempt{ID: att, OperationID: op.ID, Number: 1,
				Worker: "w1", LeaseToken: 1, ClaimedAt: at}}
		}
		if op.State.InDesk() {
			out.desk = append(out.desk, *op)
		}
		out.ops, out.attempts = append(out.ops, *op), append(out.attempts, att)
		if batch = append(batch, ch); len(batch) == 5000 || i == total-1 {
			if err := d.store.CreateBatch(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	loaded := time.Since(start)
	for n, k := range entering {
		e := enter(n)
		s := domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeFailedTerminal, Error: &e.Error}
		if e.Unknown {
			s.Outcome = domain.OutcomeUnknown
		}
		op, err := d.ledger.Workflow.Settle(ctx, testWorkflow, out.ops[k].ID, s)
		if err != nil {
			b.Fatal(err)
		}
		if !op.State.InDesk() {
			b.Fatalf("%s settled into %s", op.Key, op.State)
		}
		out.ops[k] = op
		out.desk = append(out.desk, op)
	}
	if enter != nil {
		b.Logf("settled %d operations into the desk in %v", len(entering), (time.Since(start) - loaded).Round(time.Millisecond))
	}
	b.Logf("seeded %d operations (%d in the desk) in %v", total, len(out.desk), time.Since(start).Round(time.Millisecond))
	return out
}
