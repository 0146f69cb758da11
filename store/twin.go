package store

import (
	"context"

	"github.com/opshandoff/handoff/domain"
)

// twinWhere finds a twin among the states whose outcome is still open
// (action_pending, unknown_outcome, failed_terminal): a registration of the
// same content under another key waits for a person while one of its twins
// is in them. The partial index operations_twins (migration 00014) holds
// exactly these rows, and the condition names them as literals, word for
// word its predicate: with parameters instead, a generic plan cannot prove
// the predicate and walks the namespace's rows on every registration.
// With the alias x ("x."), the twin of the row whose namespace,
// fingerprint and key are ns, fp and key (SQL).
func twinWhere(x, ns, fp, key string) string {
	return x + "namespace = " + ns + " AND " + x + "fingerprint = " + fp + " AND " +
		x + "state IN ('action_pending', 'unknown_outcome', 'failed_terminal') AND " + x + "key <> " + key
}

// twinQuery is the oldest twin, as the hold names it.
var twinQuery = "SELECT * FROM operations WHERE " + twinWhere("", "?", "?", "?") + " ORDER BY created_at, id LIMIT 1"

// noTwinSQL is the condition of a registration's write that is held for
// no twin (domain.Change.NoOpenTwin): the write itself looks, as a nested
// loop over operations_twins, so a registration without a twin — nearly
// every one — pays no statement of its own for the lookup.
func noTwinSQL(ns, fp, key string) string {
	return "NOT EXISTS (SELECT 1 FROM operations AS x WHERE " + twinWhere("x.", ns, fp, key) + ")"
}

// Twin implements domain.Store: the oldest operation in the namespace with
// the fingerprint under another key whose outcome is open.
func (s *Store) Twin(ctx context.Context, namespace, fingerprint, key string) (domain.Operation, bool, error) {
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
