package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/notify"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// approvalCards sends every new operation to its destinations: the card
// requires approval, so registering enters approval and notifies.
func approvalCards(urls ...string) domain.Cards {
	c := card()["crm.task.create"]
	c.RequiresApproval = true
	for _, u := range urls {
		c.Notify = append(c.Notify, domain.Destination{URL: u, Format: domain.FormatStandard})
	}
	return domain.Cards{c.Name: c}
}

func registerN(t *testing.T, l *domain.Ledger, n int) []string {
	t.Helper()
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	var ids []string
	for i := range n {
		res, err := l.Workflow.Register(context.Background(), wf, domain.Registration{Key: fmt.Sprintf("k%d", i), Type: "crm.task.create",
			Content: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
		if err != nil || res.Operation.State != domain.AwaitingApproval {
			t.Fatalf("register: %v %v", res.Operation.State, err)
		}
		ids = append(ids, res.Operation.ID)
	}
	return ids
}

// fakeClock is the deliverers' clock, moved by the test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// scripted answers each request with the next status of its script (the
// last one repeats) and records the webhook-ids it saw.
type scripted struct {
	mu     sync.Mutex
	script []func(http.ResponseWriter)
	ids    []string
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	s.ids = append(s.ids, r.Header.Get("webhook-id"))
	f := s.script[min(len(s.ids), len(s.script))-1]
	s.mu.Unlock()
	f(w)
}

func status(code int, header ...string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
	}
}

func deliverer(st *store.Store, clock *fakeClock) *reconcile.Deliverer {
	return &reconcile.Deliverer{Store: st, Sender: notify.NewSender(notify.Sender{AllowPrivate: true, Timeout: 5 * time.Second}),
		Now: clock.Now, Jitter: func() float64 { return 0.5 },
		Policy: domain.DeliveryPolicy{Base: 4 * time.Second, Max: time.Minute, MaxAge: time.Hour}}
}

// pass runs one delivery pass and waits for its answers to be recorded.
func pass(t *testing.T, d *reconcile.Deliverer) int {
	t.Helper()
	n, err := d.Pass(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	d.Wait()
	return n
}

func history(t *testing.T, st *store.Store, opID string) domain.NotificationRecord {
	t.Helper()
	ns, err := st.Notifications(context.Background(), opID)
	if err != nil || len(ns) != 1 {
		t.Fatalf("notifications: %d %v", len(ns), err)
	}
	return ns[0]
}

// TestServerErrorIsRetriedWithBackoff: 500, then 200 once the backoff has
// passed — not before — with both attempts recorded under one webhook-id.
func TestServerErrorIsRetriedWithBackoff(t *testing.T) {
	rx := &scripted{script: []func(http.ResponseWriter){status(500), status(200)}}
	srv := httptest.NewServer(rx)
	defer srv.Close()
	st := storetest.New(t)
	ids := registerN(t, domain.NewLedger(st, approvalCards(srv.URL)), 1)
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Microsecond).Add(time.Second)}
	d := deliverer(st, clock)
	if n := pass(t, d); n != 1 {
		t.Fatalf("first pass sent %d", n)
	}
	n := history(t, st, ids[0])
	// attempt 1: the ceiling is Base, the jitter takes half of it
	if n.Status != domain.NotificationPending || n.Attempts != 1 || !n.NextAttemptAt.Equal(clock.Now().Add(2*time.Second)) {
		t.Fatalf("after 500: %s, %d attempts, next at %v (now %v)", n.Status, n.Attempts, n.NextAttemptAt, clock.Now())
	}
	clock.Add(1900 * time.Millisecond)
	if n := pass(t, d); n != 0 {
		t.Fatalf("retried before the backoff: %d", n)
	}
	clock.Add(100 * time.Millisecond)
	if n := pass(t, d); n != 1 {
		t.Fatalf("not retried after the backoff: %d", n)
	}
	n = history(t, st, ids[0])
	if n.Status != domain.NotificationDelivered || len(n.History) != 2 || n.History[0].StatusCode != 500 ||
		n.History[0].Outcome != domain.DeliveryRetry || n.History[1].StatusCode != 200 || n.DeliveredAt == nil {
		t.Fatalf("after 200: %+v", n)
	}
	if len(rx.ids) != 2 || rx.ids[0] != rx.ids[1] || rx.ids[0] != n.ID {
		t.Fatalf("webhook-ids %v, want %s twice", rx.ids, n.ID)
	}
}

// TestRetryAfterIsWaitedOut: a 429 with Retry-After: 5 is retried after 5
// seconds and not earlier.
func TestRetryAfterIsWaitedOut(t *testing.T) {
	rx := &scripted{script: []func(http.ResponseWriter){status(429, "Retry-After", "5"), status(204)}}
	srv := httptest.NewServer(rx)
	defer srv.Close()
	st := storetest.New(t)
	ids := registerN(t, domain.NewLedger(st, approvalCards(srv.URL)), 1)
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Microsecond).Add(time.Second)}
	d := deliverer(st, clock)
	pass(t, d)
	if n := history(t, st, ids[0]); !n.NextAttemptAt.Equal(clock.Now().Add(5 * time.Second)) {
		t.Fatalf("next attempt at %v, want 5 s after %v", n.NextAttemptAt, clock.Now())
	}
	clock.Add(4 * time.Second)
	if n := pass(t, d); n != 0 {
		t.Fatal("retried inside Retry-After")
	}
	clock.Add(time.Second)
	pass(t, d)
	if n := history(t, st, ids[0]); n.Status != domain.NotificationDelivered || len(n.History) != 2 || n.History[0].StatusCode != 429 {
		t.Fatalf("after Retry-After: %+v", n)
	}
}

// TestClientErrorFailsForGood: a 4xx other than 429 is not retried.
func TestClientErrorFailsForGood(t *testing.T) {
	rx := &scripted{script: []func(http.ResponseWriter){status(410)}}
	srv := httptest.NewServer(rx)
	defer srv.Close()
	st := storetest.New(t)
	ids := registerN(t, domain.NewLedger(st, approvalCards(srv.URL)), 1)
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Microsecond).Add(time.Second)}
	d := deliverer(st, clock)
	pass(t, d)
	clock.Add(2 * time.Hour)
	pass(t, d)
	if n := history(t, st, ids[0]); n.Status != domain.NotificationFailed || len(n.History) != 1 || n.LastStatus != 410 {
		t.Fatalf("after 410: %+v", n)
	}
}

// TestCrashedSenderIsReplaced: a sender that claimed rows and died (the
// process was killed between the commit and the delivery) leaves them to the
// next sender once the claim lease passes; they arrive with their ids.
func TestCrashedSenderIsReplaced(t *testing.T) {
	rx := &scripted{script: []func(http.ResponseWriter){status(200)}}
	srv := httptest.NewServer(rx)
	defer srv.Close()
	st := storetest.New(t)
	ids := registerN(t, domain.NewLedger(st, approvalCards(srv.URL)), 3)
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Microsecond).Add(time.Second)}
	claimed, err := st.ClaimNotifications(context.Background(), clock.Now(), time.Minute, 10, 10, nil)
	if err != nil || len(claimed) != 3 {
		t.Fatalf("claim: %d %v", len(claimed), err)
	}
	d := deliverer(st, clock)
	if n := pass(t, d); n != 0 {
		t.Fatalf("took %d rows another sender holds", n)
	}
	clock.Add(time.Minute)
	if n := pass(t, d); n != 3 {
		t.Fatalf("after the lease: sent %d, want 3", n)
	}
	want := map[string]bool{}
	for _, id := range ids {
		n := history(t, st, id)
		want[n.ID] = true
		if n.Status != domain.NotificationDelivered {
			t.Fatalf("%s: %s", id, n.Status)
		}
	}
	for _, id := range rx.ids {
		if !want[id] {
			t.Fatalf("unknown webhook-id %s", id)
		}
	}
	// The dead sender's late answer is not recorded over the new one.
	ok, err := st.RecordDelivery(context.Background(), domain.DeliveryRecord{ID: claimed[0].ID, ClaimToken: claimed[0].ClaimToken,
		Status: domain.NotificationFailed, Attempt: domain.DeliveryAttempt{At: clock.Now(), Outcome: domain.DeliveryFailed}})
	if err != nil || ok {
		t.Fatalf("stale record accepted: %v %v", ok, err)
	}
}

// TestHangingDestinationDelaysNoOther: one destination never answers while
// it is held; every notification to the other arrives meanwhile.
func TestHangingDestinationDelaysNoOther(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	rx := &scripted{script: []func(http.ResponseWriter){status(200)}}
	ok := httptest.NewServer(rx)
	defer ok.Close()
	st := storetest.New(t)
	registerN(t, domain.NewLedger(st, approvalCards(hang.URL, ok.URL)), 6)
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Microsecond).Add(time.Second)}
	delivered := make(chan struct{}, 100)
	d := &reconcile.Deliverer{Store: st, Sender: notify.NewSender(notify.Sender{AllowPrivate: true, Timeout: 30 * time.Second}),
		Now: clock.Now, Interval: 10 * time.Millisecond, Concurrency: 6, PerDestination: 3,
		Observe: func(outcome string, _ time.Duration) {
			if outcome == domain.DeliveryDelivered {
				delivered <- struct{}{}
			}
		}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { d.Run(ctx); close(done) }()
	for range 6 {
		<-delivered
	}
	select {
	case <-release:
		t.Fatal("the hanging destination answered")
	default:
	}
	cancel()
	<-done
	if len(rx.ids) != 6 {
		t.Fatalf("the other destination got %d, want 6", len(rx.ids))
	}
}

// TestReplicasDeliverEachOnce: three deliverers on one database, 200 desk
// entries: 200 distinct webhook-ids arrive, each once.
func TestReplicasDeliverEachOnce(t *testing.T) {
	rx := &scripted{script: []func(http.ResponseWriter){status(200)}}
	srv := httptest.NewServer(rx)
	defer srv.Close()
	st := storetest.New(t)
	registerN(t, domain.NewLedger(st, approvalCards(srv.URL)), 200)
	clock := &fakeClock{t: time.Now().UTC().Truncate(time.Microsecond).Add(time.Second)}
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := deliverer(st, clock)
			d.Concurrency = 8
			for {
				n, err := d.Pass(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				d.Wait()
				if n == 0 {
					return
				}
			}
		}()
	}
	wg.Wait()
	seen := map[string]int{}
	for _, id := range rx.ids {
		seen[id]++
	}
	if len(seen) != 200 || len(rx.ids) != 200 {
		t.Fatalf("%d requests with %d distinct webhook-ids, want 200 and 200", len(rx.ids), len(seen))
	}
}
