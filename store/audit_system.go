package store

import (
	"context"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

var _ domain.SystemAuditor = (*Store)(nil)

// AppendSystem chains e onto the system stream. The stream's head is read
// and extended in one transaction under lockSystem (operation streams never
// take it).
func (s *Store) AppendSystem(ctx context.Context, e domain.AuditEvent) (domain.AuditEvent, error) {
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := s.lockSystem(tx); err != nil {
			return err
		}
		var err error
		e, err = appendSystemTx(tx, e)
		return err
	})
	if err != nil {
		return domain.AuditEvent{}, translate(err, "audit event")
	}
	return e, nil
}
