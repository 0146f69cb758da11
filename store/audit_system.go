package store

import (
	"context"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

var _ domain.SystemAuditor = (*Store)(nil)

// AppendSystem chains e onto the system stream. The stream's head is read
// and extended in one transaction; on PostgreSQL an advisory lock orders
// concurrent appenders (operation streams never take it).
func (s *Store) AppendSystem(ctx context.Context, e domain.AuditEvent) (domain.AuditEvent, error) {
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if s.dialect == "postgres" {
			if err := tx.Exec("SELECT pg_advisory_xact_lock(hashtext('handoff.audit.system:' || current_schema()))").Error; err != nil {
				return err
			}
		}
		var head auditRow
		if err := tx.Where("stream = ?", domain.SystemStream).Order("seq DESC").Limit(1).Find(&head).Error; err != nil {
			return err
		}
		e.Stream = domain.SystemStream
		e = domain.ChainAfter(e, head.Seq, head.Hash)
		row := toAuditRow(e)
		return tx.Create(&row).Error
	})
	if err != nil {
		return domain.AuditEvent{}, translate(err, "audit event")
	}
	return e, nil
}
