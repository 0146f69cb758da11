package store

import (
	"context"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// ClaimReady claims up to q.Limit ready operations in one transaction. On
// PostgreSQL the rows are locked with FOR UPDATE SKIP LOCKED, so concurrent
// pullers each get different operations without waiting on one another; on
// SQLite the transaction itself is exclusive.
func (s *Store) ClaimReady(ctx context.Context, q domain.ReadyQuery, decide func(domain.Operation, time.Time) (domain.Change, error)) ([]domain.Change, error) {
	var out []domain.Change
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		out = out[:0]
		now := s.now().UTC()
		nowSQL, nowArgs := s.dialect.nowSQL(now)
		// queued is operations_ready's predicate (migration 00029).
		where := []string{"namespace = ?", "queued", "(state = 'received' OR (state = 'failed_retryable' AND next_retry_at <= " + nowSQL + "))"}
		args := append([]any{q.Namespace}, nowArgs...)
		if len(q.Types) > 0 {
			where = append(where, "type IN ?")
			args = append(args, q.Types)
		}
		sql := "SELECT operations.*, " + s.dbNow() + " AS db_now FROM operations WHERE " + strings.Join(where, " AND ") +
			" ORDER BY created_at, id LIMIT ?"
		args = append(args, q.Limit)
		sql += s.dialect.skipLocked()
		var rows []operationWithClock
		if err := tx.Raw(sql, args...).Scan(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			op, err := r.Row.toDomain()
			if err != nil {
				return err
			}
			if s.dialect.keepsClock() {
				now = r.DBNow.UTC()
			}
			ch, err := decide(op, now)
			if domain.ErrorCode(err) == domain.ENotClaimable {
				continue
			} else if err != nil {
				return err
			}
			if _, err := writeTx(tx, planChange(ch)); err != nil {
				return err
			}
			out = append(out, ch)
		}
		return nil
	})
	if err != nil {
		return nil, translate(err, "operation")
	}
	for _, ch := range out { // committed: the lease holder's next call may skip its load
		s.leases.wrote(ch, nil)
	}
	return out, nil
}

// Overdue lists operations whose lease expired, whose retries ran past
// their type's time limit, or whose resend guard lapsed with its provider
// key's retention, by the database's clock.
func (s *Store) Overdue(ctx context.Context, q domain.OverdueQuery) ([]domain.Operation, time.Time, error) {
	now := s.now().UTC()
	nowSQL, nowArgs := s.dialect.nowSQL(now)
	var rows []operationWithClock
	// The leases are open_operations' (migration 00029), in the order of
	// their expiry by its index open_operations_lease_expiry.
	sql := "SELECT operations.*, " + s.dbNow() + " AS db_now FROM open_operations l JOIN operations ON operations.id = l.id" +
		" WHERE l.lease_expires_at IS NOT NULL AND l.lease_expires_at <= " + nowSQL +
		" AND operations.state IN ('processing', 'action_pending') ORDER BY l.lease_expires_at LIMIT ?"
	if err := s.db.WithContext(ctx).Raw(sql, append(nowArgs, q.Limit)...).Scan(&rows).Error; err != nil {
		return nil, time.Time{}, translate(err, "operation")
	}
	for typ, d := range q.MaxElapsed {
		if len(rows) >= q.Limit {
			break
		}
		var more []operationWithClock
		sql := "SELECT operations.*, " + s.dbNow() + " AS db_now FROM operations WHERE queued AND state = 'failed_retryable' AND type = ? AND first_attempt_at <= ? ORDER BY first_attempt_at LIMIT ?"
		cutoff := now.Add(-d)
		if s.dialect.keepsClock() {
			if err := s.db.WithContext(ctx).Raw("SELECT now()").Scan(&now).Error; err != nil {
				return nil, time.Time{}, translate(err, "clock")
			}
			cutoff = now.UTC().Add(-d)
		}
		if err := s.db.WithContext(ctx).Raw(sql, typ, cutoff, q.Limit-len(rows)).Scan(&more).Error; err != nil {
			return nil, time.Time{}, translate(err, "operation")
		}
		rows = append(rows, more...)
	}
	for typ, d := range q.Retention {
		if len(rows) >= q.Limit {
			break
		}
		more, err := s.lapsedGuards(ctx, typ, d, now, q.Limit-len(rows))
		if err != nil {
			return nil, time.Time{}, err
		}
		rows = append(rows, more...)
	}
	ops := make([]domain.Operation, 0, len(rows))
	for _, r := range rows {
		op, err := r.Row.toDomain()
		if err != nil {
			return nil, time.Time{}, domain.Wrap(domain.EInternal, err, "unreadable operation row")
		}
		ops = append(ops, op)
		if s.dialect.keepsClock() && r.DBNow.After(now) {
			now = r.DBNow
		}
	}
	return ops, now.UTC(), nil
}

// lapsedGuards lists operations of type typ waiting on a resend guard
// (domain.CodeResendGuarded) whose provider key was first sent at least
// retention ago: the provider has forgotten the key, so the re-send is no
// longer safe (domain.ResendLapsed).
func (s *Store) lapsedGuards(ctx context.Context, typ string, retention time.Duration, now time.Time, limit int) ([]operationWithClock, error) {
	if s.dialect.keepsClock() {
		if err := s.db.WithContext(ctx).Raw("SELECT now()").Scan(&now).Error; err != nil {
			return nil, translate(err, "clock")
		}
	}
	var rows []operationWithClock
	sql := "SELECT operations.*, " + s.dbNow() + " AS db_now FROM operations WHERE queued AND state IN ('received', 'failed_retryable') AND type = ?" +
		" AND last_error_code = ? AND provider_key_first_sent_at <= ? ORDER BY provider_key_first_sent_at LIMIT ?"
	err := s.db.WithContext(ctx).Raw(sql, typ, domain.CodeResendGuarded, now.UTC().Add(-retention), limit).Scan(&rows).Error
	return rows, translate(err, "operation")
}
