package store

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/opshandoff/handoff/domain"
)

// twinWhere finds a twin among the states whose outcome is still open
// (action_pending, unknown_outcome, failed_terminal): a registration of the
// same content under another key waits for a person while one of its twins
// is in them. The partial index operations_twins (migration 00014) holds
// exactly these rows, and the query names them as literals, word for word
// its predicate: with parameters instead, a generic plan cannot prove the
// predicate and walks the namespace's rows on every registration.
const twinWhere = "namespace = ? AND fingerprint = ? " +
	"AND state IN ('action_pending', 'unknown_outcome', 'failed_terminal') AND key <> ? ORDER BY created_at, id LIMIT 1"

// twinQuery is the lookup as GORM sends it (SQLite), twinFastQuery as pgx
// does (PostgreSQL's placeholders, the columns scanTargets reads).
const twinQuery = "SELECT * FROM operations WHERE " + twinWhere

var twinFastQuery = "SELECT " + opColumns + " FROM operations WHERE " + dollars(twinWhere)

// Twin implements domain.Store: the oldest operation in the namespace with
// the fingerprint under another key whose outcome is open.
func (s *Store) Twin(ctx context.Context, namespace, fingerprint, key string) (domain.Operation, bool, error) {
	if s.pool != nil {
		return s.twinFast(ctx, namespace, fingerprint, key)
	}
	var rows []operationWithClock
	err := s.db.WithContext(ctx).Raw(twinQuery, namespace, fingerprint, key).Scan(&rows).Error
	if err != nil {
		return domain.Operation{}, false, translate(err, "operation")
	}
	if len(rows) == 0 {
		return domain.Operation{}, false, nil
	}
	op, err := rows[0].Row.toDomain()
	if err != nil {
		return domain.Operation{}, false, domain.Wrap(domain.EInternal, err, "unreadable operation row")
	}
	return op, true, nil
}

// twinFast is Twin on PostgreSQL through pgx, scanned by hand as loadFast
// is: every registration asks, and through GORM the question cost the
// server about a seventh of its CPU per lifecycle — database/sql's
// wrapping, reflection over the row, and GORM's Scan rendering the
// statement with its values for a logger that discards it.
func (s *Store) twinFast(ctx context.Context, namespace, fingerprint, key string) (domain.Operation, bool, error) {
	var r operationRow
	err := s.pool.QueryRow(ctx, twinFastQuery, namespace, fingerprint, key).
		Scan(scanTargets(opTable, &r)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Operation{}, false, nil
	} else if err != nil {
		return domain.Operation{}, false, translate(err, "operation")
	}
	op, err := r.toDomain()
	if err != nil {
		return domain.Operation{}, false, domain.Wrap(domain.EInternal, err, "unreadable operation row")
	}
	return op, true, nil
}
