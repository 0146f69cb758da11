package store

import (
	"context"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

var _ domain.SystemAuditor = (*trail)(nil)

// AppendSystem chains e onto the system stream. The stream's head is read
// and extended in one transaction under lockSystem (operation streams never
// take it).
func (s *trail) AppendSystem(ctx context.Context, e domain.AuditEvent) (domain.AuditEvent, error) {
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		var err error
		e, err = s.appendSystemLocked(tx, e)
		return err
	})
	if err != nil {
		return domain.AuditEvent{}, translate(err, "audit event")
	}
	return e, nil
}

// appendSystemLocked takes the system stream's lock in tx and chains e onto
// the stream: for a row written with its system event in one transaction
// (a token, a session, a drill receipt).
func (s *conn) appendSystemLocked(tx *gorm.DB, e domain.AuditEvent) (domain.AuditEvent, error) {
	if err := s.lockSystem(tx); err != nil {
		return domain.AuditEvent{}, err
	}
	return appendSystemTx(tx, e)
}
