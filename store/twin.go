package store

import (
	"context"

	"github.com/opshandoff/handoff/domain"
)

// twinStates are the states whose outcome is still open: a registration of
// the same content under another key waits for a person while one of its
// twins is in them. The partial index operations_twins (migration 00014)
// holds exactly these rows.
var twinStates = []string{domain.ActionPending.String(), domain.UnknownOutcome.String(), domain.FailedTerminal.String()}

// Twin implements domain.Store: the oldest operation in the namespace with
// the fingerprint under another key whose outcome is open.
func (s *Store) Twin(ctx context.Context, namespace, fingerprint, key string) (domain.Operation, bool, error) {
	var rows []operationWithClock
	err := s.db.WithContext(ctx).Raw("SELECT * FROM operations WHERE namespace = ? AND fingerprint = ? AND state IN ? AND key <> ? "+
		"ORDER BY created_at, id LIMIT 1", namespace, fingerprint, twinStates, key).Scan(&rows).Error
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
