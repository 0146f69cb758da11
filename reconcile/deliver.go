package reconcile

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// Sender makes one delivery attempt (notify.Sender).
type Sender interface {
	Send(ctx context.Context, n domain.Notification) domain.DeliveryResult
}

// Deliverer sends the outbox. Each pass claims due rows in a short
// transaction (SKIP LOCKED on PostgreSQL, so every replica can run one),
// sends each in its own goroutine with no transaction open, and records the
// attempt with a compare-and-set on the claim. A crashed sender's rows come
// back when their claim lease passes: a notification is never lost, and a
// repeat carries the same webhook-id.
type Deliverer struct {
	Store  domain.OutboxStore
	Sender Sender
	Policy domain.DeliveryPolicy
	// Interval between passes when the outbox is idle.
	Interval time.Duration
	// Lease is how long a claim keeps other senders off a row; it must
	// outlast one attempt (default 1 min).
	Lease time.Duration
	// Concurrency bounds the attempts in flight (default 32);
	// PerDestination bounds those to one URL (default 4), so a slow or dead
	// destination cannot take every slot from the others.
	Concurrency    int
	PerDestination int
	Now            func() time.Time
	Jitter         func() float64
	Log            *slog.Logger
	// Observe, if set, is told of every attempt: the delivery metrics.
	Observe func(outcome string, latency time.Duration)

	mu       sync.Mutex
	inFlight map[string]int
	total    int
	wg       sync.WaitGroup
	wake     chan struct{}
}

func (d *Deliverer) defaults() {
	if d.Interval <= 0 {
		d.Interval = time.Second
	}
	if d.Lease <= 0 {
		d.Lease = time.Minute
	}
	if d.Concurrency <= 0 {
		d.Concurrency = 32
	}
	if d.PerDestination <= 0 {
		d.PerDestination = 4
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.Jitter == nil {
		d.Jitter = rand.Float64
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Policy == (domain.DeliveryPolicy{}) {
		d.Policy = domain.DefaultDeliveryPolicy
	}
	if d.inFlight == nil {
		d.inFlight = map[string]int{}
		d.wake = make(chan struct{}, 1)
	}
}

// Run delivers until ctx ends, then waits for the attempts in flight.
func (d *Deliverer) Run(ctx context.Context) {
	d.defaults()
	t := time.NewTicker(d.Interval)
	defer t.Stop()
	defer d.wg.Wait()
	for {
		if _, err := d.Pass(ctx); err != nil && ctx.Err() == nil {
			d.Log.Warn("notification delivery pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-d.wake:
		}
	}
}

// Pass claims what is due and free slots allow, starts sending it, and
// returns how many it started; it does not wait for the answers.
func (d *Deliverer) Pass(ctx context.Context) (int, error) {
	d.defaults()
	d.mu.Lock()
	free := d.Concurrency - d.total
	var busy []string
	for url, n := range d.inFlight {
		if n >= d.PerDestination {
			busy = append(busy, url)
		}
	}
	d.mu.Unlock()
	if free <= 0 {
		return 0, nil
	}
	rows, err := d.Store.ClaimNotifications(ctx, d.Now(), d.Lease, free, d.PerDestination, busy)
	if err != nil {
		return 0, err
	}
	started := 0
	for _, r := range rows {
		// A destination already partly busy may briefly exceed its share
		// (up to twice PerDestination); one at its share is never claimed.
		d.mu.Lock()
		d.inFlight[r.Destination.URL]++
		d.total++
		d.mu.Unlock()
		started++
		d.wg.Add(1)
		go func(r domain.NotificationRecord) {
			defer d.wg.Done()
			defer d.release(r.Destination.URL)
			d.deliver(ctx, r)
		}(r)
	}
	return started, nil
}

// Wait blocks until every attempt started by Pass has been recorded.
func (d *Deliverer) Wait() { d.wg.Wait() }

func (d *Deliverer) release(url string) {
	d.mu.Lock()
	d.inFlight[url]--
	if d.inFlight[url] <= 0 {
		delete(d.inFlight, url)
	}
	d.total--
	d.mu.Unlock()
	select { // a freed slot may let a waiting row go now
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *Deliverer) deliver(ctx context.Context, r domain.NotificationRecord) {
	at := d.Now()
	res := d.Sender.Send(ctx, r.Notification)
	if ctx.Err() != nil {
		return // shutting down: the claim lease hands the row to the next sender
	}
	outcome, next := domain.JudgeDelivery(res, r.Attempts+1, r.CreatedAt, d.Now(), d.Policy, d.Jitter)
	status := domain.NotificationPending
	switch outcome {
	case domain.DeliveryDelivered:
		status = domain.NotificationDelivered
	case domain.DeliveryFailed:
		status = domain.NotificationFailed
	}
	rec := domain.DeliveryRecord{ID: r.ID, ClaimToken: r.ClaimToken, Status: status, Next: next,
		Attempt: domain.DeliveryAttempt{NotificationID: r.ID, At: at, StatusCode: res.StatusCode, Latency: res.Latency,
			Response: res.Response, Error: res.Err, Outcome: outcome}}
	// The answer is in: record it even if ctx ends now.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	ok, err := d.Store.RecordDelivery(wctx, rec)
	if err != nil {
		d.Log.Warn("recording a notification attempt failed", "notification", r.ID, "err", err)
		return
	}
	if !ok {
		d.Log.Info("notification claimed again before its attempt was recorded", "notification", r.ID)
	}
	if d.Observe != nil {
		d.Observe(outcome, res.Latency)
	}
	if outcome == domain.DeliveryFailed {
		d.Log.Warn("notification failed for good", "notification", r.ID, "url", r.Destination.URL,
			"status", res.StatusCode, "err", res.Err)
	}
}
