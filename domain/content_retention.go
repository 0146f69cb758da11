package domain

import (
	"context"
	"time"
)

// ContentStore is the part of a store that purges content for retention.
type ContentStore interface {
	// PurgeContent empties the content snapshots and result data of up to
	// limit final operations last changed before cutoff, keeping the key,
	// fingerprint, content hashes and result ref, and reports how many.
	PurgeContent(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// PurgeContent applies content retention: the content and result data of
// operations final for longer than retention are purged. Zero retention
// keeps them for ever. Replays still deduplicate (the fingerprint stays) and
// return the result ref; the audit trail, which holds only content hashes,
// still verifies.
func (l *Upkeep) PurgeContent(ctx context.Context, retention time.Duration, limit int) (int, error) {
	if retention <= 0 {
		return 0, nil
	}
	return l.store.PurgeContent(ctx, l.Now().Add(-retention), limit)
}
