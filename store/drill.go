package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// drills is the store's part for the drills' receipts.
type drills struct{ *conn }

var (
	_ domain.DrillReader = (*drills)(nil)
	_ domain.DrillWriter = (*drills)(nil)
)

// drillRow is one stored drill receipt.
type drillRow struct {
	ID          string `gorm:"primaryKey"`
	Type        string
	CardVersion int
	CardSHA256  string `gorm:"column:card_sha256"`
	Verdict     string
	SHA256      string `gorm:"column:sha256"`
	RanBy       string
	RanAt       time.Time
	Receipt     string
}

func (drillRow) TableName() string { return "drill_receipts" }

func (r drillRow) toDomain() domain.DrillRecord {
	return domain.DrillRecord{ID: r.ID, Type: r.Type, CardVersion: r.CardVersion, CardSHA256: r.CardSHA256,
		Verdict: r.Verdict, SHA256: r.SHA256, RanBy: r.RanBy, RanAt: r.RanAt.UTC()}
}

// SaveDrill stores a receipt and chains its hash into the system stream as
// a drill_recorded event, in one transaction.
func (s *drills) SaveDrill(ctx context.Context, rec domain.DrillRecord, receipt []byte, e domain.AuditEvent) (domain.AuditEvent, error) {
	row := drillRow{ID: rec.ID, Type: rec.Type, CardVersion: rec.CardVersion, CardSHA256: rec.CardSHA256,
		Verdict: rec.Verdict, SHA256: rec.SHA256, RanBy: rec.RanBy, RanAt: rec.RanAt.UTC().Truncate(time.Microsecond), Receipt: string(receipt)}
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		var err error
		e, err = s.appendSystemLocked(tx, e)
		return err
	})
	if err != nil {
		return domain.AuditEvent{}, translate(err, "drill receipt")
	}
	return e, nil
}

// DrillSummaries implements domain.DrillReader.
func (s *drills) DrillSummaries(ctx context.Context) (map[string]domain.DrillSummary, error) {
	var rows []drillRow
	err := s.db.WithContext(ctx).Select("id, type, card_version, card_sha256, verdict, sha256, ran_by, ran_at").
		Order("ran_at, id").Find(&rows).Error
	if err != nil {
		return nil, translate(err, "drill receipt")
	}
	out := map[string]domain.DrillSummary{}
	for _, r := range rows {
		sum := out[r.Type]
		sum.Last = r.toDomain()
		if r.Verdict == domain.DrillVerdictPass {
			pass := r.toDomain()
			sum.LastPass = &pass
		}
		out[r.Type] = sum
	}
	return out, nil
}

// DrillReceipt implements domain.DrillReader.
func (s *drills) DrillReceipt(ctx context.Context, id string) (domain.DrillRecord, []byte, error) {
	var row drillRow
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&row).Error
	if err != nil {
		return domain.DrillRecord{}, nil, translate(err, "drill receipt")
	}
	return row.toDomain(), []byte(row.Receipt), nil
}

// EachDrillReceipt streams every stored receipt, its row and its text, in
// batches by id (domain.AuditReader).
func (s *drills) EachDrillReceipt(ctx context.Context, fn func(domain.DrillRecord, []byte) error) error {
	after := ""
	for {
		var rows []drillRow
		if err := s.db.WithContext(ctx).Where("id > ?", after).Order("id").Limit(auditBatch).Find(&rows).Error; err != nil {
			return translate(err, "drill receipt")
		}
		for _, r := range rows {
			if err := fn(r.toDomain(), []byte(r.Receipt)); err != nil {
				return err
			}
		}
		if len(rows) < auditBatch {
			return nil
		}
		after = rows[len(rows)-1].ID
	}
}

func (r snapshot) EachDrillReceipt(ctx context.Context, fn func(domain.DrillRecord, []byte) error) error {
	return r.s.EachDrillReceipt(ctx, fn)
}

// DrillAudit answers the drill_recorded event of a receipt: the hash the
// audit trail holds for it.
func (s *drills) DrillAudit(ctx context.Context, id string) (domain.AuditEvent, bool, error) {
	var rows []auditRow
	err := s.db.WithContext(ctx).Where("stream = ? AND action = ?", domain.SystemStream, domain.ActionDrillRecorded).
		Order("pos").Find(&rows).Error
	if err != nil {
		return domain.AuditEvent{}, false, translate(err, "audit event")
	}
	for _, r := range rows {
		e := r.toDomain()
		if detailString(e.Detail, "receipt_id") == id {
			return e, true, nil
		}
	}
	return domain.AuditEvent{}, false, nil
}

func detailString(raw json.RawMessage, field string) string {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	v, _ := m[field].(string)
	return v
}
