package store

import (
	"context"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// twinOf is true for an operation o that a registration of the same
// content under another key waits on (twin_unresolved): twin_held, the
// predicate of operations_twin_holds (migration 00029), is a registration
// awaiting approval for that reason.
const twinOf = "EXISTS (SELECT 1 FROM operations t WHERE t.namespace = o.namespace AND t.identity_hash = o.identity_hash" +
	" AND t.twin_held AND t.id <> o.id)"

// maxIncidents bounds the Incidents list.
const maxIncidents = 500

// Incidents implements domain.IncidentStore: the active incidents first,
// then the others, each the most open items first, then the latest seen.
// Their open items' states are kept on their rows; the twins are counted
// from the held registrations (twinCounts).
func (s *Store) Incidents(ctx context.Context) ([]domain.Incident, error) {
	var rows []incidentRow
	db := s.db.WithContext(ctx)
	err := db.Where("version > 0").
		Order("CASE WHEN status IN ('open', 'acknowledged') THEN 0 ELSE 1 END, open_items DESC, last_seen DESC, id").
		Limit(maxIncidents).Find(&rows).Error
	if err != nil {
		return nil, translate(err, "incidents")
	}
	twins, err := twinCounts(db, "")
	if err != nil {
		return nil, err
	}
	out := make([]domain.Incident, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
		out[i].Twins = twins[r.ID]
	}
	return out, nil
}

// twinCounts counts, per incident (only the one named, unless id is ""),
// the open items that a held registration of the same content waits on.
// It starts from the held registrations (operations_twin_holds), which are
// few, and finds their open twins (open_operations) and those twins'
// open memberships (incident_items_open): its cost follows the holds, not
// the desk's size.
func twinCounts(db *gorm.DB, id string) (map[string]int, error) {
	var rows []struct {
		IncidentID string
		Twins      int
	}
	where, args := "t.twin_held", []any{}
	if id != "" {
		where, args = where+" AND ii.incident_id = ?", append(args, id)
	}
	err := db.Raw("SELECT ii.incident_id, COUNT(DISTINCT o.id) AS twins FROM operations t"+
		" JOIN open_operations o ON o.namespace = t.namespace AND o.identity_hash = t.identity_hash AND o.id <> t.id"+
		" JOIN incident_items ii ON ii.operation_id = o.id AND ii.left_at IS NULL"+
		" WHERE "+where+" GROUP BY ii.incident_id", args...).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "incidents")
	}
	by := make(map[string]int, len(rows))
	for _, r := range rows {
		by[r.IncidentID] = r.Twins
	}
	return by, nil
}

// Incident implements domain.IncidentStore: the incident, its items (open
// ones first, then by entry) without their content, and its timeline.
func (s *Store) Incident(ctx context.Context, id string, limit int) (domain.Incident, []domain.IncidentItem, []domain.IncidentEvent, error) {
	db := s.db.WithContext(ctx)
	var row incidentRow
	res := db.Where("id = ? AND version > 0", id).Limit(1).Find(&row)
	if res.Error != nil {
		return domain.Incident{}, nil, nil, translate(res.Error, "incident")
	}
	if res.RowsAffected == 0 {
		return domain.Incident{}, nil, nil, domain.Errorf(domain.ENotFound, "no such incident")
	}
	in := row.toDomain()
	var items []struct {
		ID               string
		Key              string
		Namespace        string
		State            string
		Version          int64
		LastErrorClass   *string
		LastErrorCode    *string
		LastErrorMessage *string
		EnteredAt        time.Time
		LeftAt           *time.Time
		Twin             bool
	}
	// The page's items are chosen from incident_items alone, then joined:
	// one lookup of operations per item shown, not per item of the
	// incident, however many thousands it holds.
	const order = " ORDER BY CASE WHEN ii.left_at IS NULL THEN 0 ELSE 1 END, ii.entered_at, ii.operation_id"
	err := db.Raw("SELECT o.id, o.key, o.namespace, o.state, o.version, o.last_error_class, o.last_error_code,"+
		" o.last_error_message, ii.entered_at, ii.left_at, "+twinOf+" AS twin"+
		" FROM (SELECT ii.operation_id, ii.entered_at, ii.left_at FROM incident_items ii WHERE ii.incident_id = ?"+
		order+" LIMIT ?) AS ii JOIN operations o ON o.id = ii.operation_id"+order, id, limit).Scan(&items).Error
	if err != nil {
		return in, nil, nil, translate(err, "incident items")
	}
	out := make([]domain.IncidentItem, len(items))
	for i, it := range items {
		st, _ := domain.ParseState(it.State)
		out[i] = domain.IncidentItem{OperationID: it.ID, Key: it.Key, Namespace: it.Namespace, State: st, Version: it.Version,
			Error:   domain.ErrorKind{Class: deref(it.LastErrorClass), Code: deref(it.LastErrorCode)},
			Message: deref(it.LastErrorMessage), EnteredAt: it.EnteredAt.UTC(), Open: it.LeftAt == nil, Twin: it.Twin}
	}
	// The page may list some of the open items only: the twins are
	// counted over all of them.
	twins, err := twinCounts(db, id)
	if err != nil {
		return in, nil, nil, err
	}
	in.Twins = twins[id]
	var evs []incidentEventRow
	if err := db.Where("incident_id = ?", id).Order("at, id").Find(&evs).Error; err != nil {
		return in, out, nil, translate(err, "incident timeline")
	}
	events := make([]domain.IncidentEvent, len(evs))
	for i, e := range evs {
		events[i] = e.toDomain()
	}
	return in, out, events, nil
}
