package domain

import (
	"context"
	"time"
)

// BatchRecord is an applied batch as it is kept: the decision, who took it
// and when, and each item's result. Each item's decision is in its own
// timeline and the audit trail for good; the record is the batch's receipt,
// which any replica can show.
type BatchRecord struct {
	Batch  Batch // the decision as applied; Items are the versions previewed
	By     Actor
	At     time.Time
	Result BatchResult
}

// BatchKeeper keeps the records of applied batches. The store package
// implements it; the Ledger finds it on its Store.
type BatchKeeper interface {
	KeepBatch(ctx context.Context, r BatchRecord) error
	// KeptBatch returns the record of batch id, or ENotFound.
	KeptBatch(ctx context.Context, id string) (BatchRecord, error)
}

// keepBatch stores an applied batch's record. A failure to keep it is
// returned on the result, not as the batch's error: its decisions stand.
func (l *Bulk) keepBatch(ctx context.Context, actor Actor, b Batch, res *BatchResult) {
	res.KeepError = l.store.KeepBatch(ctx, BatchRecord{Batch: b, By: actor, At: l.Now().UTC(), Result: *res})
	res.Kept = res.KeepError == nil
}

// KeptBatch returns an applied batch's record to anyone who may read the
// desk: like the items' timelines, it names keys, states and people.
func (l *Bulk) KeptBatch(ctx context.Context, actor Actor, id string) (BatchRecord, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return BatchRecord{}, err
	}
	if err := checkID(id, "batch"); err != nil {
		return BatchRecord{}, err
	}
	return l.store.KeptBatch(ctx, id)
}
