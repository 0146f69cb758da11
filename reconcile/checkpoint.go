package reconcile

import (
	"context"
	"log/slog"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// AuditKeeper is the part of the audit trail the checkpointer drives;
// audit.Trail implements it.
type AuditKeeper interface {
	Checkpoint(ctx context.Context) (domain.Checkpoint, bool, error)
	Purge(ctx context.Context, retention time.Duration, limit int) (int, error)
}

// Checkpointer periodically purges what audit retention allows and writes
// checkpoints over the streams that changed. Every replica may run one:
// a checkpoint is written under the system stream's lock and numbered by a
// unique key, and a replica that finds the lock taken skips its turn.
type Checkpointer struct {
	Trail    AuditKeeper
	Interval time.Duration
	// Retention is how long the streams of final operations are kept;
	// zero keeps them for ever, which is the default.
	Retention time.Duration
	// Publish receives each checkpoint this replica writes, to put its root
	// outside the database (audit.RootFile); a failure is logged and the
	// checkpoint stays, unanchored.
	Publish []RootPublisher
	Log     *slog.Logger
}

// RootPublisher puts a checkpoint's root where the database's writers
// cannot rewrite it.
type RootPublisher interface {
	Publish(ctx context.Context, c domain.Checkpoint) error
}

// maxRounds bounds the checkpoints (and purge batches) of one tick, so a
// backlog is worked off without starving the next tick's timer.
const (
	maxRounds  = 50
	purgeBatch = 100
)

// Run works every Interval until ctx ends.
func (c *Checkpointer) Run(ctx context.Context) {
	t := time.NewTicker(c.Interval)
	defer t.Stop()
	for {
		c.Tick(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick purges, then checkpoints until nothing is left to cover. Purging
// first lets the same tick's checkpoint commit to the new tombstones.
func (c *Checkpointer) Tick(ctx context.Context) {
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	for range maxRounds {
		n, err := c.Trail.Purge(ctx, c.Retention, purgeBatch)
		if err != nil && ctx.Err() == nil {
			log.Warn("audit retention failed", "err", err)
		}
		if n > 0 {
			log.Info("audit streams purged", "streams", n, "retention", c.Retention)
		}
		if err != nil || n < purgeBatch {
			break
		}
	}
	for range maxRounds {
		cp, wrote, err := c.Trail.Checkpoint(ctx)
		if err != nil && ctx.Err() == nil {
			log.Warn("audit checkpoint failed", "err", err)
		}
		if err != nil || !wrote {
			return
		}
		// The root in the log is a copy outside the database too.
		log.Info("audit checkpoint", "checkpoint", cp.Seq, "root", cp.Root, "streams", len(cp.Heads),
			"upto_pos", cp.UptoPos, "event", cp.EventID)
		for _, p := range c.Publish {
			if err := p.Publish(ctx, cp); err != nil {
				log.Error("audit root not published", "checkpoint", cp.Seq, "root", cp.Root, "err", err)
			}
		}
	}
}
