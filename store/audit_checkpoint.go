package store

import (
	"context"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// checkpointRow is the bookkeeping of one checkpoint; the checkpoint itself
// is a system audit event.
type checkpointRow struct {
	Seq     int64 `gorm:"column:seq;primaryKey;autoIncrement:false"`
	UptoPos int64
	Root    string
	Heads   int
	EventID string
	At      time.Time
}

func (checkpointRow) TableName() string { return "audit_checkpoints" }

// checkpointScan bounds the events one checkpoint reads, so a backlog is
// worked off in several short transactions rather than one long one.
const checkpointScan = 20 * auditBatch

// The system stream's advisory lock is keyed by schema as well: advisory
// locks are per database, and two Handoffs (or two test schemas) in one
// database must not wait on each other's system streams.

// lockSystem serialises writers of the system stream on PostgreSQL; on
// SQLite the transaction's write lock already does.
func (s *conn) lockSystem(tx *gorm.DB) error {
	return s.dialect.lock(tx, "handoff.audit.system:")
}

// tryLockSystem is lockSystem without waiting: a checkpointer that finds
// the lock taken leaves the work to whoever holds it, rather than holding a
// connection while it waits.
func (s *conn) tryLockSystem(tx *gorm.DB) (bool, error) {
	return s.dialect.tryLock(tx, "handoff.audit.system:")
}

// appendSystemTx chains e onto the system stream inside tx, which holds
// lockSystem; it is AppendSystem for callers that already have a
// transaction.
func appendSystemTx(tx *gorm.DB, e domain.AuditEvent) (domain.AuditEvent, error) {
	var head auditRow
	if err := tx.Where("stream = ?", domain.SystemStream).Order("seq DESC").Limit(1).Find(&head).Error; err != nil {
		return e, err
	}
	e.Stream = domain.SystemStream
	e = domain.ChainAfter(e, head.Seq, head.Hash)
	row := toAuditRow(e)
	return e, tx.Create(&row).Error
}

// WriteCheckpoint implements domain.AuditStore.
func (s *trail) WriteCheckpoint(ctx context.Context, maxHeads int,
	build func(domain.Checkpoint, []domain.StreamHead, int64) (domain.Checkpoint, domain.AuditEvent)) (domain.Checkpoint, bool, error) {
	var out domain.Checkpoint
	wrote := false
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if ok, err := s.tryLockSystem(tx); !ok || err != nil {
			return err // another replica is checkpointing, or appending to the system stream
		}
		var prev checkpointRow
		if err := tx.Order("seq DESC").Limit(1).Find(&prev).Error; err != nil {
			return err
		}
		horizon, err := s.settledHorizon(ctx, tx)
		if err != nil {
			return err
		}
		heads, upto, err := changedHeads(tx, prev.UptoPos, horizon, maxHeads)
		if err != nil || upto == 0 {
			return err
		}
		c, e := build(domain.Checkpoint{Seq: prev.Seq, UptoPos: prev.UptoPos, Root: prev.Root}, heads, upto)
		if e, err = appendSystemTx(tx, e); err != nil {
			return err
		}
		row := checkpointRow{Seq: c.Seq, UptoPos: c.UptoPos, Root: c.Root, Heads: len(c.Heads), EventID: e.ID, At: e.At.UTC()}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		out, wrote = c, true
		out.EventID, out.At = e.ID, e.At
		return nil
	})
	if err != nil {
		return domain.Checkpoint{}, false, translate(err, "audit checkpoint")
	}
	return out, wrote, nil
}

// settleWait bounds how long a checkpoint waits for the transactions that
// may still commit events below the positions it would cover.
const settleWait = 2 * time.Second

// settledHorizon is the highest write position below which no event can
// still appear. PostgreSQL hands out positions before commit, so a
// position can be taken by a transaction that commits after later ones:
// the horizon is the sequence's high-water mark once every transaction
// that could hold a position below it has ended. A writer of an operation
// stream has its transaction id before it takes a position (it changes the
// operation row first), and system-stream writers hold the lock this
// checkpoint holds, so none is missed. SQLite has one writer, and this
// transaction is it.
func (s *trail) settledHorizon(ctx context.Context, tx *gorm.DB) (int64, error) {
	if s.dialect.writersTakeTurns() {
		var hw int64
		return hw, tx.Raw("SELECT COALESCE(MAX(pos), 0) FROM audit_events").Scan(&hw).Error
	}
	// The mark first, then an id for this transaction: every transaction
	// that took a position up to the mark had its id before, so a smaller
	// one, and the oldest running id reaching ours means they all ended.
	var mark struct{ HW, Ours int64 }
	if err := tx.Raw("SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM audit_events_pos_seq").Scan(&mark.HW).Error; err != nil {
		return 0, err
	}
	if err := tx.Raw("SELECT pg_current_xact_id()::text::bigint").Scan(&mark.Ours).Error; err != nil {
		return 0, err
	}
	for deadline := time.Now().Add(settleWait); ; {
		var done bool
		if err := tx.Raw("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint >= ?", mark.Ours).Scan(&done).Error; err != nil {
			return 0, err
		}
		if done {
			return mark.HW, nil
		}
		if time.Now().After(deadline) {
			return 0, domain.Errorf(domain.EUnavailable, "a transaction has run for more than %s; the audit checkpoint waits for it", settleWait)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// changedHeads reads the events at positions (after, horizon] in write
// order and returns the last head of each operation stream among them, at
// most maxHeads streams, and the last position covered. upto is 0 when
// nothing but checkpoints was written: that needs no checkpoint.
func changedHeads(tx *gorm.DB, after, horizon int64, maxHeads int) (heads []domain.StreamHead, upto int64, err error) {
	type ev struct {
		Pos    int64
		Stream string
		Seq    int64
		Hash   string
		Action string
	}
	index := map[string]int{}
	changed := false
	covered := after
	for scanned := 0; scanned < checkpointScan && covered < horizon; {
		var rows []ev
		if err := tx.Raw("SELECT pos, stream, seq, hash, action FROM audit_events WHERE pos > ? AND pos <= ? ORDER BY pos LIMIT ?",
			covered, horizon, auditBatch).Scan(&rows).Error; err != nil {
			return nil, 0, err
		}
		for _, r := range rows {
			if r.Stream == domain.SystemStream {
				changed = changed || r.Action != domain.ActionCheckpoint
			} else if i, ok := index[r.Stream]; ok {
				heads[i].Seq, heads[i].Hash = r.Seq, r.Hash
				changed = true
			} else if len(heads) == maxHeads {
				return done(heads, covered, changed)
			} else {
				index[r.Stream] = len(heads)
				heads = append(heads, domain.StreamHead{Stream: r.Stream, Seq: r.Seq, Hash: r.Hash})
				changed = true
			}
			covered = r.Pos
		}
		scanned += len(rows)
		if len(rows) < auditBatch {
			covered = horizon // the rest of the range holds no event: rolled-back positions
		}
	}
	return done(heads, covered, changed)
}

func done(heads []domain.StreamHead, upto int64, changed bool) ([]domain.StreamHead, int64, error) {
	if !changed {
		return nil, 0, nil
	}
	return heads, upto, nil
}
