package store

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"slices"
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
// and writes it after (a supersede link, a note on a completed operation)
// writes only the columns it changed, never the content it loaded
// (changedCols), so the purge stays.
func (s *Store) PurgeContent(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	var final []string
	for _, st := range domain.States {
		if st.Final() {
			final = append(final, st.String())
		}
	}
	n := 0
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		lock := s.dialect.skipLockedOf("o")
		// The final operations with content left are final_operations'
		// rows (migration 00029), by their last change.
		var ops []purgedOp
		err := tx.Raw("SELECT o.id, o.namespace, o.key, o.event_id FROM final_operations f JOIN operations o ON o.id = f.id "+
			"WHERE f.content_left AND f.updated_at < ? AND o.content <> '' AND o.state IN ? "+
			"ORDER BY f.updated_at, f.id LIMIT ?"+lock, cutoff.UTC(), final, limit).Scan(&ops).Error
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
		if err := purgeEventActions(tx, s.dialect, ops); err != nil {
			return err
		}
		n = len(ops)
		return nil
	})
	return n, translate(err, "operation")
}

// purgedOp is an operation a purge batch took.
type purgedOp struct{ ID, Namespace, Key, EventID string }

// purgeEventActions replaces the content each operation's event recorded
// for its action with null; the event's fingerprint stays, so a redelivery
// is still recognised. Two replicas may purge two actions of one event at
// once, so each event is read under FOR UPDATE on PostgreSQL (SQLite has
// one writer) and rewritten once with all of this batch's actions: a
// rewrite from a read taken before the other's commit would put the
// other's content back. Events are locked in one order, so two batches
// never wait for each other in a cycle.
func purgeEventActions(tx *gorm.DB, d dialect, ops []purgedOp) error {
	type eventKey struct{ namespace, eventID string }
	keys := map[eventKey][]string{}
	for _, op := range ops {
		if op.EventID != "" {
			k := eventKey{op.Namespace, op.EventID}
			keys[k] = append(keys[k], op.Key)
		}
	}
	order := slices.SortedFunc(maps.Keys(keys), func(a, b eventKey) int {
		return cmp.Or(cmp.Compare(a.namespace, b.namespace), cmp.Compare(a.eventID, b.eventID))
	})
	lock := d.forUpdate()
	for _, k := range order {
		var row eventRow
		res := tx.Raw("SELECT * FROM events WHERE namespace = ? AND event_id = ? LIMIT 1"+lock, k.namespace, k.eventID).Scan(&row)
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			continue
		}
		var actions []actionJSON
		if err := json.Unmarshal([]byte(row.Actions), &actions); err != nil {
			return err
		}
		for i, a := range actions {
			if slices.Contains(keys[k], domain.ActionKey(k.eventID, a.Action)) {
				actions[i].Content = json.RawMessage("null")
			}
		}
		raw, err := json.Marshal(actions)
		if err != nil {
			return err
		}
		if err := tx.Model(&eventRow{}).Where("namespace = ? AND event_id = ?", k.namespace, k.eventID).
			Update("actions", string(raw)).Error; err != nil {
			return err
		}
	}
	return nil
}
