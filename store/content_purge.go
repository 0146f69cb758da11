package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// PurgeContent implements domain.ContentStore: it empties the content
// snapshots and result data of up to limit final operations last changed
// before cutoff, and the contents their event recorded for them. It keeps
// everything a replay or the audit trail needs — key, fingerprint, content
// hashes, result ref — and marks each operation with the purge time.
//
// Every replica may run it at once: rows are chosen under FOR UPDATE SKIP
// LOCKED on PostgreSQL (SQLite has one writer), and only rows with content
// left are chosen. A decision that loaded the operation before the purge
// and wrote it after (a note on a completed operation) writes the content
// back; the next run purges it again and keeps the first purge time.
func (s *Store) PurgeContent(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	var final []string
	for _, st := range domain.States {
		if st.Final() {
			final = append(final, st.String())
		}
	}
	n := 0
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		lock := ""
		if s.dialect == "postgres" {
			lock = " FOR UPDATE SKIP LOCKED"
		}
		var ops []struct {
			ID, Namespace, Key, EventID string
		}
		err := tx.Raw("SELECT id, namespace, key, event_id FROM operations WHERE content <> '' AND state IN ? "+
			"AND updated_at < ? ORDER BY updated_at, id LIMIT ?"+lock, final, cutoff.UTC(), limit).Scan(&ops).Error
		if err != nil || len(ops) == 0 {
			return err
		}
		now, err := s.clock(ctx)
		if err != nil {
			return err
		}
		ids := make([]string, len(ops))
		for i, op := range ops {
			ids[i] = op.ID
		}
		if err := tx.Exec("UPDATE operations SET content = '', result_data = NULL, content_purged_at = COALESCE(content_purged_at, ?) "+
			"WHERE id IN ?", now.UTC(), ids).Error; err != nil {
			return err
		}
		if err := tx.Exec("UPDATE content_versions SET content = '' WHERE operation_id IN ?", ids).Error; err != nil {
			return err
		}
		for _, op := range ops {
			if op.EventID != "" {
				if err := purgeEventAction(tx, op.Namespace, op.EventID, op.Key); err != nil {
					return err
				}
			}
		}
		n = len(ops)
		return nil
	})
	return n, translate(err, "operation")
}

// purgeEventAction replaces the content an event recorded for the action
// whose operation has key with null; the event's fingerprint stays, so a
// redelivery is still recognised.
func purgeEventAction(tx *gorm.DB, namespace, eventID, key string) error {
	var row eventRow
	res := tx.Where("namespace = ? AND event_id = ?", namespace, eventID).Limit(1).Find(&row)
	if res.Error != nil || res.RowsAffected == 0 {
		return res.Error
	}
	var actions []actionJSON
	if err := json.Unmarshal([]byte(row.Actions), &actions); err != nil {
		return err
	}
	for i, a := range actions {
		if domain.ActionKey(eventID, a.Action) == key {
			actions[i].Content = json.RawMessage("null")
		}
	}
	raw, err := json.Marshal(actions)
	if err != nil {
		return err
	}
	return tx.Model(&eventRow{}).Where("namespace = ? AND event_id = ?", namespace, eventID).Update("actions", string(raw)).Error
}
