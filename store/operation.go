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
	ctx, span := startWrite(ctx, "create", ch.Op.ID)
	op, created, err := s.create(ctx, ch)
	if err != nil || created {
		s.leases.wrote(ch, err)
	}
	endSpan(span, err)
	return op, created, err
}

func (s *Store) create(ctx context.Context, ch domain.Change) (domain.Operation, bool, error) {
	p := planCreate(ch)
	var created bool
	var err error
	if s.pool != nil && p.route != routeTx {
		created, err = s.createFast(ctx, p)
	} else {
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			created, err = writeTx(tx, p)
			return err
		})
		err = translate(err, "operation")
	}
	if err != nil {
		return domain.Operation{}, false, err
	}
	if created {
		return ch.Op, true, nil
	}
	op, _, err := s.LoadByKey(ctx, ch.Op.Namespace, ch.Op.Key)
	if p.noTwin && domain.ErrorCode(err) == domain.ENotFound {
		// Not written, and the key is free: the write found a twin.
		return domain.Operation{}, false, domain.Wrap(domain.EConflict, domain.ErrOpenTwin, domain.ErrOpenTwin.Error())
	}
	return op, false, err
}

// Apply writes the change if the operation is still at ch.FromVersion.
// A confirmed write of a leased operation is remembered (leasecache.go);
// any other answer forgets it.
func (s *Store) Apply(ctx context.Context, ch domain.Change) error {
	ctx, span := startWrite(ctx, "update", ch.Op.ID)
	err := s.apply(ctx, ch)
	s.leases.wrote(ch, err)
	endSpan(span, err)
	return err
}

func (s *Store) apply(ctx context.Context, ch domain.Change) error {
	p := planChange(ch)
	if s.pool != nil && p.route != routeTx {
		return s.applyFast(ctx, p)
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		_, err := writeTx(tx, p)
		return err
	})
	return translate(err, "operation")
}

// writeTx renders the plan as GORM calls in the transaction tx: the
// operation's insert (false when its key exists: nothing else is written)
// or its compare-and-set (EConflict when the guard did not match), then
// the rows beside it, then a superseded original's update — which must
// still find the cancelled, unlinked version the decision saw, or nothing
// of the registration is written and the Ledger decides again.
// A guard that needs a live lease needs PostgreSQL's clock; only
// PostgreSQL's store decides such changes (SQLite has no lease cache), so
// elsewhere one is refused rather than written unchecked.
func writeTx(tx *gorm.DB, p *writePlan) (bool, error) {
	row := p.op
	if p.create {
		if p.noTwin {
			var twins []string
			o := p.op
			if !dialectOf(tx).writersTakeTurns() {
				if err := tx.Exec(twinTurnTx, o.Namespace, o.IdentityHash).Error; err != nil {
					return false, err
				}
			}
			if err := tx.Raw("SELECT id FROM open_operations WHERE "+twinWhere("", "?", "?", "?")+" LIMIT 1",
				o.Namespace, o.IdentityHash, o.Key).Scan(&twins).Error; err != nil || len(twins) > 0 {
				return false, err
			}
		}
		res := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
		if res.Error != nil || res.RowsAffected == 0 {
			return false, res.Error
		}
	} else {
		g := p.guard
		live, args := "", []any{g.id, g.version}
		cv := ""
		if g.checkContent {
			cv, args = "?", append(args, g.contentVersion)
		}
		if g.liveLease {
			if !dialectOf(tx).keepsClock() {
				return false, domain.Errorf(domain.EInternal, "a write that needs a live lease needs PostgreSQL's clock")
			}
			live = "true"
		}
		set := make(map[string]any, len(p.cols))
		for _, c := range p.cols {
			set[c.name] = c.v
		}
		res := tx.Table("operations").Where(guardSQL("", "?", "?", cv, live), args...).Updates(set)
		if res.Error != nil {
			return false, res.Error
		}
		if res.RowsAffected == 0 {
			return false, domain.Errorf(domain.EConflict, "operation %s moved past version %d", g.id, g.version)
		}
	}
	if p.incidentExit != nil {
		if err := incidentExitTx(tx, *p.incidentExit); err != nil {
			return false, err
		}
	}
	outbox := p.outbox
	if p.incidentEntry != nil {
		notes, err := incidentEntryTx(tx, *p.incidentEntry)
		if err != nil {
			return false, err
		}
		outbox = append(append([]notificationRow{}, outbox...), notes...)
	}
	if len(outbox) > 0 {
		if err := tx.Create(&outbox).Error; err != nil {
			return false, err
		}
	}
	for _, w := range []struct {
		table string
		w     *childWrite
	}{{"attempts", p.attempt}, {"content_versions", p.content}} {
		if err := writeChildTx(tx, w.table, w.w); err != nil {
			return false, err
		}
	}
	if len(p.events) > 0 {
		if err := tx.Create(&p.events).Error; err != nil {
			return false, err
		}
	}
	if p.superseded != nil {
		if _, err := writeTx(tx, p.superseded); err != nil {
			return false, err
		}
	}
	return true, nil
}

// writeChildTx inserts the child row, or sets its columns where its key
// matches.
func writeChildTx(tx *gorm.DB, table string, w *childWrite) error {
	if w == nil {
		return nil
	}
	if w.insert != nil {
		return tx.Table(table).Create(colMap(w.insert)).Error
	}
	q := tx.Table(table)
	for _, k := range w.key {
		q = q.Where(k.name+" = ?", k.v)
	}
	return q.Updates(colMap(w.set)).Error
}

func colMap(cols []col) map[string]any {
	m := make(map[string]any, len(cols))
	for _, c := range cols {
		m[c.name] = c.v
	}
	return m
}

// dbNow is the SQL for the database's clock.
func (s *Store) dbNow() string {
	return s.dialect.clockSQL()
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
	op.ContentPurgedAt = utcPtr(row.Row.ContentPurgedAt)
	now := row.DBNow
	if !s.dialect.keepsClock() {
		now = s.now()
	}
	return op, now.UTC(), nil
}

// Load returns the operation with the id, within the namespace if one is given.
func (s *Store) Load(ctx context.Context, namespace, id string) (domain.Operation, time.Time, error) {
	where, args := "id = ?", []any{id}
	if namespace != "" {
		where, args = where+" AND namespace = ?", append(args, namespace)
	}
	return s.loadWhere(ctx, where, args...)
}

// loadWhere is load on SQLite, loadFast (with PostgreSQL's placeholders)
// on PostgreSQL: one condition for both.
func (s *Store) loadWhere(ctx context.Context, where string, args ...any) (domain.Operation, time.Time, error) {
	if s.pool != nil {
		return s.loadFast(ctx, dollars(where), args...)
	}
	return s.load(ctx, where, args...)
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
			op.ContentPurgedAt = utcPtr(r.Row.ContentPurgedAt)
			out = append(out, op)
		}
	}
	return out, now, nil
}

// LoadByKey returns the operation with the key in the namespace.
func (s *Store) LoadByKey(ctx context.Context, namespace, key string) (domain.Operation, time.Time, error) {
	return s.loadWhere(ctx, "namespace = ? AND key = ?", namespace, key)
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

// SettledAttempt returns the operation's attempt that the lease token names.
func (s *Store) SettledAttempt(ctx context.Context, operationID string, leaseToken int64) (domain.Attempt, bool, error) {
	var rows []attemptRow
	if err := s.db.WithContext(ctx).Where("operation_id = ? AND lease_token = ?", operationID, leaseToken).
		Limit(1).Find(&rows).Error; err != nil {
		return domain.Attempt{}, false, translate(err, "attempt")
	}
	if len(rows) == 0 {
		return domain.Attempt{}, false, nil
	}
	return rows[0].toDomain(), true, nil
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
