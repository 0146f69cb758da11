package store

import (
	"context"
	"slices"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Create inserts a new operation unless its key is taken in the namespace.
func (s *Store) Create(ctx context.Context, ch domain.Change) (domain.Operation, bool, error) {
	op, created, err := s.create(ctx, ch)
	if err != nil || created {
		s.lc.wrote(ch, err)
	}
	return op, created, err
}

func (s *Store) create(ctx context.Context, ch domain.Change) (domain.Operation, bool, error) {
	if s.pool != nil && fastPathEligible(ch) {
		created, err := s.createFast(ctx, ch)
		if err != nil {
			return domain.Operation{}, false, err
		}
		if created {
			return ch.Op, true, nil
		}
		op, _, err := s.LoadByKey(ctx, ch.Op.Namespace, ch.Op.Key)
		return op, false, err
	}
	created := false
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		row := toOperationRow(ch.Op)
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return nil // the key exists: write nothing else
		}
		created = true
		if err := writeSideRows(tx, ch); err != nil {
			return err
		}
		if orig := ch.Superseded; orig != nil {
			// The original must still be the cancelled, unlinked version
			// the decision saw; otherwise nothing of this registration is
			// written and the Ledger decides again.
			return applyTx(tx, *orig)
		}
		return nil
	})
	if err != nil {
		return domain.Operation{}, false, translate(err, "operation")
	}
	if created {
		return ch.Op, true, nil
	}
	op, _, err := s.LoadByKey(ctx, ch.Op.Namespace, ch.Op.Key)
	return op, false, err
}

// Apply writes the change if the operation is still at ch.FromVersion.
// A confirmed write of a leased operation is remembered (leasecache.go);
// any other answer forgets it.
func (s *Store) Apply(ctx context.Context, ch domain.Change) error {
	err := s.apply(ctx, ch)
	s.lc.wrote(ch, err)
	return err
}

func (s *Store) apply(ctx context.Context, ch domain.Change) error {
	if s.pool != nil && fastPathEligible(ch) {
		return s.applyFast(ctx, ch)
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		return applyTx(tx, ch)
	})
	return translate(err, "operation")
}

// applyTx is the compare-and-set: the columns the change changed, only
// where the version is the one the decision was taken on. Like the fast
// path it writes the state columns that differ from the operation the
// change was decided on (all of them without it) and the content columns
// only with a content snapshot — so a write decided before a content purge
// (a supersede link, a note on a completed operation) leaves the purge in
// place rather than writing back the content it loaded.
// A LiveLease change also needs the lease live by the database's clock;
// only PostgreSQL's store decides such changes (SQLite has no lease cache),
// so elsewhere one is refused rather than written unchecked.
func applyTx(tx *gorm.DB, ch domain.Change) error {
	row := toOperationRow(ch.Op)
	q := tx.Model(&operationRow{}).Where("id = ? AND version = ?", row.ID, ch.FromVersion)
	if ch.LiveLease {
		if tx.Dialector.Name() != "postgres" {
			return domain.Errorf(domain.EInternal, "a write that needs a live lease needs PostgreSQL's clock")
		}
		q = q.Where("lease_expires_at > clock_timestamp()")
	}
	cols := stateColsToWrite(ch, &row)
	if ch.Content != nil {
		cols = append(cols, opContentCols(&row)...)
	}
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	res := q.Select(names).Updates(&row)
	if res.Error != nil {
		return res.Error
	}
	if res.RowsAffected == 0 {
		return domain.Errorf(domain.EConflict, "operation %s moved past version %d", row.ID, ch.FromVersion)
	}
	return writeSideRows(tx, ch)
}

// writeSideRows writes what accompanies an operation's change: its attempt,
// its content snapshot, its audit events and its notifications (the outbox).
func writeSideRows(tx *gorm.DB, ch domain.Change) error {
	if err := writeNotifications(tx, ch.Notifications); err != nil {
		return err
	}
	if a := ch.Attempt; a != nil {
		if err := writeAttempt(tx, *a); err != nil {
			return err
		}
	}
	if c := ch.Content; c != nil {
		if err := writeContent(tx, *c); err != nil {
			return err
		}
	}
	if len(ch.Events) > 0 {
		rows := make([]auditRow, len(ch.Events))
		for i, e := range ch.Events {
			rows[i] = toAuditRow(e)
		}
		if err := tx.Create(&rows).Error; err != nil {
			return err
		}
	}
	return nil
}

func writeAttempt(tx *gorm.DB, a domain.AttemptChange) error {
	row := toAttemptRow(a.Attempt)
	if a.New {
		return tx.Create(&row).Error
	}
	set := map[string]any{}
	if row.BeganAt != nil {
		set["began_at"] = *row.BeganAt
	}
	if row.SettledAt != nil {
		set["settled_at"] = *row.SettledAt
		set["outcome"] = row.Outcome
		set["error_class"], set["error_code"], set["error_message"] = row.ErrorClass, row.ErrorCode, row.ErrorMessage
	}
	return tx.Model(&attemptRow{}).Where("operation_id = ? AND number = ?", row.OperationID, row.Number).Updates(set).Error
}

func writeContent(tx *gorm.DB, c domain.ContentChange) error {
	v := c.Version
	if c.New {
		return tx.Create(&contentRow{OperationID: v.OperationID, Version: v.Version, Content: string(v.Content),
			SHA256: v.SHA256, CreatedBy: v.CreatedBy, CreatedByIssuer: v.CreatedByIssuer, CreatedBySubject: v.CreatedBySubject,
			CreatedAt: v.CreatedAt.UTC(), Reason: v.Reason}).Error
	}
	set := map[string]any{}
	if v.ApprovedAt != nil {
		set["approved_by"], set["approved_at"] = v.ApprovedBy, v.ApprovedAt.UTC()
	}
	if v.RejectedAt != nil {
		set["rejected_by"], set["rejected_at"] = v.RejectedBy, v.RejectedAt.UTC()
	}
	return tx.Model(&contentRow{}).Where("operation_id = ? AND version = ?", v.OperationID, v.Version).Updates(set).Error
}

// dbNow is the SQL for the database's clock.
func (s *Store) dbNow() string {
	if s.dialect == "postgres" {
		return "clock_timestamp()"
	}
	return "NULL"
}

// load reads one operation and the database's clock.
func (s *Store) load(ctx context.Context, where string, args ...any) (domain.Operation, time.Time, error) {
	var row operationWithClock
	res := s.db.WithContext(ctx).Raw("SELECT operations.*, "+s.dbNow()+" AS db_now FROM operations WHERE "+where+" LIMIT 1", args...).Scan(&row)
	if res.Error != nil {
		return domain.Operation{}, time.Time{}, translate(res.Error, "operation")
	}
	if res.RowsAffected == 0 {
		return domain.Operation{}, time.Time{}, domain.Errorf(domain.ENotFound, "no such operation")
	}
	op, err := row.Row.toDomain()
	if err != nil {
		return domain.Operation{}, time.Time{}, domain.Wrap(domain.EInternal, err, "unreadable operation row")
	}
	op.ContentPurgedAt = utcPtr(row.ContentPurgedAt)
	now := row.DBNow
	if s.dialect != "postgres" {
		now = s.now()
	}
	return op, now.UTC(), nil
}

// Load returns the operation with the id, within the namespace if one is given.
func (s *Store) Load(ctx context.Context, namespace, id string) (domain.Operation, time.Time, error) {
	if s.pool != nil {
		if namespace == "" {
			return s.loadFast(ctx, "id = $1", id)
		}
		return s.loadFast(ctx, "id = $1 AND namespace = $2", id, namespace)
	}
	if namespace == "" {
		return s.load(ctx, "id = ?", id)
	}
	return s.load(ctx, "id = ? AND namespace = ?", id, namespace)
}

// LoadMany implements domain.Store: the operations with the ids, read a
// batch of ids per query (a bulk preview's thousand items in two), and the
// database's clock, read first.
func (s *Store) LoadMany(ctx context.Context, ids []string) ([]domain.Operation, time.Time, error) {
	now, err := s.clock(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	out := make([]domain.Operation, 0, len(ids))
	for chunk := range slices.Chunk(ids, loadBatch) {
		var rows []operationWithClock
		if err := s.db.WithContext(ctx).Raw("SELECT * FROM operations WHERE id IN ?", chunk).Scan(&rows).Error; err != nil {
			return nil, time.Time{}, translate(err, "operation")
		}
		for _, r := range rows {
			op, err := r.Row.toDomain()
			if err != nil {
				return nil, time.Time{}, domain.Wrap(domain.EInternal, err, "unreadable operation row")
			}
			op.ContentPurgedAt = utcPtr(r.ContentPurgedAt)
			out = append(out, op)
		}
	}
	return out, now, nil
}

// LoadByKey returns the operation with the key in the namespace.
func (s *Store) LoadByKey(ctx context.Context, namespace, key string) (domain.Operation, time.Time, error) {
	if s.pool != nil {
		return s.loadFast(ctx, "namespace = $1 AND key = $2", namespace, key)
	}
	return s.load(ctx, "namespace = ? AND key = ?", namespace, key)
}

// Attempts lists the operation's attempts in order.
func (s *Store) Attempts(ctx context.Context, operationID string) ([]domain.Attempt, error) {
	var rows []attemptRow
	if err := s.db.WithContext(ctx).Where("operation_id = ?", operationID).Order("number").Find(&rows).Error; err != nil {
		return nil, translate(err, "attempt")
	}
	out := make([]domain.Attempt, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// Timeline lists the operation's audit events in order.
func (s *Store) Timeline(ctx context.Context, operationID string) ([]domain.AuditEvent, error) {
	var rows []auditRow
	if err := s.db.WithContext(ctx).Where("stream = ?", operationID).Order("seq").Find(&rows).Error; err != nil {
		return nil, translate(err, "audit event")
	}
	out := make([]domain.AuditEvent, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// ContentVersions lists the operation's content snapshots in order.
func (s *Store) ContentVersions(ctx context.Context, operationID string) ([]domain.ContentVersion, error) {
	var rows []contentRow
	if err := s.db.WithContext(ctx).Where("operation_id = ?", operationID).Order("version").Find(&rows).Error; err != nil {
		return nil, translate(err, "content version")
	}
	out := make([]domain.ContentVersion, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}
