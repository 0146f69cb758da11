package reconcile

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// Resumer makes a claimable operation's call (execute.Executor).
type Resumer interface {
	Resume(ctx context.Context, op domain.Operation) error
}

// Retrier makes Handoff's own retries of the operations whose card has an
// execute_adapter and names Handoff the retry layer: each pass finds those
// whose retry is due (failed_retryable past next_retry_at, or received
// again after a person's retry) and has the executor claim and call them.
// It runs on every replica at once: the claim is a compare-and-set, so one
// replica makes each retry. With retry_layer worker or none it never
// re-sends: the card's caller, or a person, owns the retries.
type Retrier struct {
	Upkeep   *domain.Upkeep
	Executor Resumer
	Types    []string // the types with an execute_adapter
	Interval time.Duration
	Batch    int
	Now      func() time.Time
	Log      *slog.Logger
}

func (r *Retrier) defaults() {
	if r.Interval <= 0 {
		r.Interval = 500 * time.Millisecond
	}
	if r.Batch <= 0 {
		r.Batch = 100
	}
	if r.Now == nil {
		r.Now = time.Now
	}
	if r.Log == nil {
		r.Log = slog.Default()
	}
}

// Run retries until ctx ends.
func (r *Retrier) Run(ctx context.Context) {
	r.defaults()
	if len(r.Types) == 0 {
		return
	}
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		if _, err := r.Pass(ctx); err != nil && ctx.Err() == nil {
			r.Log.Warn("execute retry pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass starts the due retries, waits for them and reports how many it
// started.
func (r *Retrier) Pass(ctx context.Context) (int, error) {
	r.defaults()
	var types []string
	for _, typ := range r.Types {
		if c, err := r.Upkeep.Cards.Get(typ); err == nil && c.Retrier() == domain.RetryByHandoff {
			types = append(types, typ)
		}
	}
	if len(types) == 0 {
		return 0, nil
	}
	q := domain.ListQuery{States: []domain.State{domain.FailedRetryable, domain.Received}, Types: types, Limit: r.Batch}
	now := r.Now()
	var wg sync.WaitGroup
	n := 0
	for page := 0; page < 10; page++ {
		ops, next, err := r.Upkeep.Retryable(ctx, q)
		if err != nil {
			wg.Wait()
			return n, err
		}
		for _, op := range ops {
			if op.State == domain.FailedRetryable && (op.NextRetryAt == nil || op.NextRetryAt.After(now)) {
				continue
			}
			n++
			wg.Go(func() {
				if err := r.Executor.Resume(ctx, op); err != nil && ctx.Err() == nil {
					r.Log.Warn("execute retry failed", "operation", op.ID, "err", err)
				}
			})
		}
		if next == "" {
			break
		}
		q.Cursor = next
	}
	wg.Wait()
	return n, nil
}
