package store

import (
	"context"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// Retention's deliberate path through an append-only table: the tombstone
// is chained first, then the stream is deleted by the one route the
// table's trigger lets through — handoff_purge_audit_stream on PostgreSQL,
// a permit row on SQLite — all in one transaction.

// PurgeCandidates implements domain.AuditStore.
func (s *trail) PurgeCandidates(ctx context.Context, cutoff time.Time, limit int) ([]domain.PurgeCandidate, error) {
	type cand struct {
		ID        string
		Version   int64
		AuditHead string
		State     string
		UpdatedAt time.Time
	}
	var rows []cand
	err := s.db.WithContext(ctx).Raw("SELECT o.id, o.version, o.audit_head, o.state, o.updated_at FROM operations o "+
		"WHERE o.state IN ? AND o.updated_at < ? AND EXISTS (SELECT 1 FROM audit_events a WHERE a.stream = o.id) "+
		"ORDER BY o.updated_at, o.id LIMIT ?",
		[]string{domain.Completed.String(), domain.Cancelled.String()}, cutoff.UTC(), limit).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "operation")
	}
	out := make([]domain.PurgeCandidate, 0, len(rows))
	for _, r := range rows {
		st, err := domain.ParseState(r.State)
		if err != nil {
			continue
		}
		out = append(out, domain.PurgeCandidate{Head: domain.StreamHead{Stream: r.ID, Seq: r.Version, Hash: r.AuditHead},
			State: st, UpdatedAt: r.UpdatedAt.UTC()})
	}
	return out, nil
}

// PurgeStream implements domain.AuditStore. It refuses (EConflict) when the
// operation moved since it was listed, and when the stream does not end at
// the operation's audit head: deleting a stream that does not verify would
// destroy the evidence.
func (s *trail) PurgeStream(ctx context.Context, c domain.PurgeCandidate, tombstone domain.AuditEvent) error {
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := s.lockSystem(tx); err != nil {
			return err
		}
		var op struct {
			Version   int64
			AuditHead string
			State     string
		}
		if err := tx.Raw("SELECT version, audit_head, state FROM operations WHERE id = ?"+s.dialect.forUpdate(), c.Head.Stream).Scan(&op).Error; err != nil {
			return err
		}
		if op.Version != c.Head.Seq || op.AuditHead != c.Head.Hash || op.State != c.State.String() {
			return domain.Errorf(domain.EConflict, "operation %s moved since it was chosen for purging", c.Head.Stream)
		}
		var last auditRow
		if err := tx.Where("stream = ?", c.Head.Stream).Order("seq DESC").Limit(1).Find(&last).Error; err != nil {
			return err
		}
		if last.Seq != c.Head.Seq || last.Hash != c.Head.Hash {
			return domain.Errorf(domain.EConflict, "audit stream %s does not end at its operation's head; run `handoff audit verify --db`", c.Head.Stream)
		}
		if _, err := appendSystemTx(tx, tombstone); err != nil {
			return err
		}
		return s.deleteStream(tx, c.Head.Stream)
	})
	return translate(err, "audit stream")
}

func (s *trail) deleteStream(tx *gorm.DB, stream string) error {
	if s.dialect.isPostgres() {
		var n int64
		return tx.Raw("SELECT handoff_purge_audit_stream(?)", stream).Scan(&n).Error
	}
	if err := tx.Exec("INSERT INTO audit_purge_permits (stream) VALUES (?)", stream).Error; err != nil {
		return err
	}
	if err := tx.Exec("DELETE FROM audit_events WHERE stream = ?", stream).Error; err != nil {
		return err
	}
	return tx.Exec("DELETE FROM audit_purge_permits WHERE stream = ?", stream).Error
}
