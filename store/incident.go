package store

import (
	"context"
	"errors"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

var _ domain.IncidentStore = (*Store)(nil)

// Incidents are written in the transaction of the change that puts an item
// on the desk or takes it off (writeTx), with what domain.IncidentJoined
// and IncidentItemLeft decide on the incident read, locked, in that
// transaction; people's triage in one of its own (TriageIncident).

// lockIncident reads the incident row matching where for update: on
// PostgreSQL a row lock, on SQLite the transaction's write lock already.
func lockIncident(tx *gorm.DB, where string, args ...any) (incidentRow, bool, error) {
	var row incidentRow
	q := tx.Where(where, args...)
	res := dialectOf(tx).lockRows(q).Limit(1).Find(&row)
	return row, res.RowsAffected == 1, res.Error
}

// incidentExitTx closes the item's open incident membership, if it has
// one, and writes what its leaving does to the incident.
func incidentExitTx(tx *gorm.DB, x domain.IncidentExit) error {
	var item incidentItemRow
	res := tx.Where("operation_id = ? AND left_at IS NULL", x.OperationID).Limit(1).Find(&item)
	if res.Error != nil || res.RowsAffected == 0 {
		return res.Error // an item that entered before incidents were kept
	}
	if err := tx.Model(&incidentItemRow{}).Where("incident_id = ? AND operation_id = ?", item.IncidentID, item.OperationID).
		Update("left_at", x.At.UTC()).Error; err != nil {
		return err
	}
	row, ok, err := lockIncident(tx, "id = ?", item.IncidentID)
	if err != nil || !ok {
		return err
	}
	in, ev := domain.IncidentItemLeft(row.toDomain(), x)
	return saveIncidentTx(tx, in, ev)
}

// incidentEntryTx adds the item to its incident, opening the incident if
// there is none, and returns the notifications the entry makes due.
func incidentEntryTx(tx *gorm.DB, e domain.IncidentEntry) ([]notificationRow, error) {
	// A placeholder (version 0) makes sure the row exists: two first items
	// entering at once meet on the unique key, and the second waits for
	// the first's lock instead of failing.
	ph := incidentRow{ID: e.NewID, Type: e.Type, ErrorClass: e.Error.Class, ErrorCode: e.Error.Code, Namespaces: "[]",
		FirstSeen: e.At.UTC(), LastSeen: e.At.UTC(), Status: string(domain.IncidentOpen), Version: 0}
	if err := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "type"}, {Name: "error_class"}, {Name: "error_code"}},
		DoNothing: true}).Create(&ph).Error; err != nil {
		return nil, err
	}
	row, ok, err := lockIncident(tx, "type = ? AND error_class = ? AND error_code = ?", e.Type, e.Error.Class, e.Error.Code)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, domain.Errorf(domain.EInternal, "incident of %s %s vanished", e.Type, e.Error)
	}
	found := row.Version > 0
	prev := row.toDomain()
	if !found {
		prev = domain.Incident{}
		e.NewID = row.ID
	}
	var item incidentItemRow
	res := tx.Where("incident_id = ? AND operation_id = ?", row.ID, e.OperationID).Limit(1).Find(&item)
	if res.Error != nil {
		return nil, res.Error
	}
	rejoin := res.RowsAffected == 1
	in, notes, ev := domain.IncidentJoined(prev, found, rejoin, e)
	if rejoin {
		err = tx.Model(&incidentItemRow{}).Where("incident_id = ? AND operation_id = ?", row.ID, e.OperationID).
			Updates(map[string]any{"entered_at": e.At.UTC(), "left_at": nil}).Error
	} else {
		err = tx.Create(&incidentItemRow{IncidentID: row.ID, OperationID: e.OperationID, EnteredAt: e.At.UTC()}).Error
	}
	if err != nil {
		return nil, err
	}
	if in.Version == 0 {
		in.Version = 1
	} else {
		in.Version++
	}
	if err := saveIncidentTx(tx, in, ev); err != nil {
		return nil, err
	}
	out := make([]notificationRow, len(notes))
	for i, n := range notes {
		out[i] = toNotificationRow(n)
	}
	return out, nil
}

// saveIncidentTx writes every column of the incident and its timeline
// event, if any.
func saveIncidentTx(tx *gorm.DB, in domain.Incident, ev *domain.IncidentEvent) error {
	row := toIncidentRow(in)
	if err := tx.Model(&incidentRow{}).Where("id = ?", row.ID).Select("*").Updates(&row).Error; err != nil {
		return err
	}
	if ev == nil {
		return nil
	}
	er := toIncidentEventRow(*ev)
	return tx.Create(&er).Error
}

// TriageIncident implements domain.IncidentStore.
func (s *Store) TriageIncident(ctx context.Context, id string,
	decide func(domain.Incident, time.Time) (domain.Incident, domain.IncidentEvent, domain.AuditEvent, error)) (domain.Incident, error) {
	var out domain.Incident
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := s.lockSystem(tx); err != nil {
			return err
		}
		row, ok, err := lockIncident(tx, "id = ? AND version > 0", id)
		if err != nil {
			return err
		}
		if !ok {
			return domain.Errorf(domain.ENotFound, "no such incident")
		}
		in, ev, audit, err := decide(row.toDomain(), s.now().UTC())
		if err != nil {
			return err
		}
		res := tx.Model(&incidentRow{}).Where("id = ? AND version = ?", row.ID, row.Version).Select("*").Updates(toIncidentRow(in))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return domain.Errorf(domain.EConflict, "incident %s changed meanwhile", id)
		}
		if _, err := appendSystemTx(tx, audit); err != nil {
			return err
		}
		er := toIncidentEventRow(ev)
		if err := tx.Create(&er).Error; err != nil {
			return err
		}
		out = in
		return nil
	})
	var de *domain.Error
	if errors.As(err, &de) {
		return out, err
	}
	return out, translate(err, "incident")
}
