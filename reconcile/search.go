package reconcile

import (
	"context"
	"log/slog"
	"time"
)

// SearchIndex is what the search indexer drives; store.Store implements it.
type SearchIndex interface {
	// IndexSearch writes the search text of at most limit queued changes
	// and returns how many it took.
	IndexSearch(ctx context.Context, limit int) (int, error)
}

// SearchIndexer keeps the Operations page's text search up to date off the
// write path: every Interval it writes the search text of the operations
// changed since (on PostgreSQL; SQLite's search reads the operations
// themselves). What is left to index is in the database, not here: a
// replica that crashes, or one that never ran, leaves it to the next batch
// of any replica. Every replica runs one; their batches take turns, and a
// replica that finds another's batch at work leaves the queue to it.
type SearchIndexer struct {
	Index SearchIndex
	// Interval is the pause after the queue was found empty; zero is
	// DefaultSearchInterval.
	Interval time.Duration
	// Batch is how many changes one statement takes; zero is
	// DefaultSearchBatch.
	Batch int
	Log   *slog.Logger
}

// DefaultSearchInterval keeps a change's text findable within about a
// second; an empty queue costs one short statement per interval.
const DefaultSearchInterval = 500 * time.Millisecond

// DefaultSearchBatch bounds a batch's transaction.
const DefaultSearchBatch = 500

// Run indexes until ctx ends.
func (x *SearchIndexer) Run(ctx context.Context) {
	interval := x.Interval
	if interval <= 0 {
		interval = DefaultSearchInterval
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		x.Tick(ctx)
		t.Reset(interval)
	}
}

// Tick indexes batch after batch until one comes back short or fails, so
// that a backlog (after a restart, or a burst of writes) is worked off at
// once, and returns how many changes it took.
func (x *SearchIndexer) Tick(ctx context.Context) int {
	batch := x.Batch
	if batch <= 0 {
		batch = DefaultSearchBatch
	}
	log := x.Log
	if log == nil {
		log = slog.Default()
	}
	total := 0
	for ctx.Err() == nil {
		n, err := x.Index.IndexSearch(ctx, batch)
		total += n
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("search indexing failed", "err", err)
			}
			break
		}
		if n < batch {
			break
		}
	}
	return total
}
