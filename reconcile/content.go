package reconcile

import (
	"context"
	"log/slog"
	"time"
)

// ContentKeeper is what content retention drives; domain.Upkeep implements it.
type ContentKeeper interface {
	PurgeContent(ctx context.Context, retention time.Duration, limit int) (int, error)
}

// ContentPurger periodically purges the content snapshots and result data
// of operations final for longer than Retention (HANDOFF_CONTENT_RETENTION).
// Every replica may run one: each batch takes rows no other replica holds
// and only rows not purged yet, so purging twice changes nothing.
type ContentPurger struct {
	Ledger   ContentKeeper
	Interval time.Duration
	// Retention is how long final operations keep their content; zero
	// keeps it for ever, which is the default.
	Retention time.Duration
	Log       *slog.Logger
}

// Run works every Interval until ctx ends.
func (p *ContentPurger) Run(ctx context.Context) {
	t := time.NewTicker(p.Interval)
	defer t.Stop()
	for {
		p.Tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick purges in batches until a batch comes back short, at most maxRounds
// batches, so a backlog is worked off without starving the next tick.
func (p *ContentPurger) Tick(ctx context.Context) {
	if p.Retention <= 0 {
		return
	}
	log := p.Log
	if log == nil {
		log = slog.Default()
	}
	for range maxRounds {
		n, err := p.Ledger.PurgeContent(ctx, p.Retention, purgeBatch)
		if err != nil && ctx.Err() == nil {
			log.Warn("content retention failed", "err", err)
		}
		if n > 0 {
			log.Info("content purged", "operations", n, "retention", p.Retention)
		}
		if err != nil || n < purgeBatch {
			return
		}
	}
}
