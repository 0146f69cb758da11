// Package reconcile is Handoff's time-driven side: loops that apply what
// time alone decides — leases that expired, retries that ran out of time,
// desk items to escalate, notifications to deliver, audit checkpoints and
// retention. Every loop is safe on every replica at once: each change it
// makes is a compare-and-set decided in domain, a row claimed with SKIP
// LOCKED, or guarded by a lock and a unique key.
package reconcile

import (
	"context"
	"log/slog"
	"time"
)

// Sweepable is the part of the ledger the sweeper drives.
type Sweepable interface {
	Sweep(ctx context.Context, limit int) (int, error)
}

// Sweeper periodically applies expired leases and exhausted retries.
type Sweeper struct {
	Ledger   Sweepable
	Interval time.Duration
	Batch    int
	Log      *slog.Logger
}

// Run sweeps every Interval until ctx ends. A full batch is followed at once
// by another, so a backlog drains without waiting for the next tick.
func (s *Sweeper) Run(ctx context.Context) {
	batch := s.Batch
	if batch <= 0 {
		batch = 500
	}
	log := s.Log
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		for {
			n, err := s.Ledger.Sweep(ctx, batch)
			if err != nil && ctx.Err() == nil {
				log.Warn("sweep failed", "err", err)
			}
			if n > 0 {
				log.Info("swept", "changed", n)
			}
			if err != nil || n < batch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
