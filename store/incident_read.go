package store

import (
	"context"
	"slices"
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
// then the others, each the most open items first, then the latest seen, with their open items'
// states and twins counted in one grouped query.
func (s *Store) Incidents(ctx context.Context) ([]domain.Incident, error) {
	var rows []incidentRow
	db := s.db.WithContext(ctx)
	err := db.Where("version > 0").
		Order("CASE WHEN status IN ('open', 'acknowledged') THEN 0 ELSE 1 END, open_items DESC, last_seen DESC, id").
		Limit(maxIncidents).Find(&rows).Error
	if err != nil {
		return nil, translate(err, "incidents")
	}
	by, err := openItemCounts(db, "")
	if err != nil {
		return nil, err
	}
	out := make([]domain.Incident, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
		if a := by[r.ID]; a != nil {
			out[i].States, out[i].Twins = deskOrder(a.states), a.twins
		}
	}
	return out, nil
}

// openCounts are an incident's open items' states and how many of them a
// held twin waits on.
type openCounts struct {
	states []domain.State
	twins  int
}

// openItemCounts counts the open items of the incident named, or of every
// incident when id is "", in one grouped query.
func openItemCounts(db *gorm.DB, id string) (map[string]*openCounts, error) {
	var rows []struct {
		IncidentID string
		State      string
		N          int
		Twins      int
	}
	where, args := "ii.left_at IS NULL", []any{}
	if id != "" {
		where, args = where+" AND ii.incident_id = ?", append(args, id)
	}
	err := db.Raw("SELECT ii.incident_id, o.state, COUNT(*) AS n, SUM(CASE WHEN "+twinOf+" THEN 1 ELSE 0 END) AS twins"+
		" FROM incident_items ii JOIN operations o ON o.id = ii.operation_id WHERE "+where+
		" GROUP BY ii.incident_id, o.state", args...).Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "incidents")
	}
	by := map[string]*openCounts{}
	for _, r := range rows {
		a := by[r.IncidentID]
		if a == nil {
			a = &openCounts{}
			by[r.IncidentID] = a
		}
		if d, err := domain.ParseState(r.State); err == nil && !slices.Contains(a.states, d) {
			a.states = append(a.states, d)
		}
		a.twins += r.Twins
	}
	return by, nil
}

// deskOrder sorts states as domain.DeskStates lists them.
func deskOrder(states []domain.State) []domain.State {
	var out []domain.State
	for _, d := range domain.DeskStates {
		if slices.Contains(states, d) {
			out = append(out, d)
		}
	}
	return out
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
	var states []domain.State
	open := 0
	for i, it := range items {
		st, _ := domain.ParseState(it.State)
		out[i] = domain.IncidentItem{OperationID: it.ID, Key: it.Key, Namespace: it.Namespace, State: st, Version: it.Version,
			Error:   domain.ErrorKind{Class: deref(it.LastErrorClass), Code: deref(it.LastErrorCode)},
			Message: deref(it.LastErrorMessage), EnteredAt: it.EnteredAt.UTC(), Open: it.LeftAt == nil, Twin: it.Twin}
		if out[i].Open {
			open++
			states = append(states, st)
			if it.Twin {
				in.Twins++
			}
		}
	}
	in.States = deskOrder(states)
	if open < in.OpenItems {
		// The page holds some of the open items only: their states and
		// twins are counted over all of them.
		by, err := openItemCounts(db, id)
		if err != nil {
			return in, nil, nil, err
		}
		in.States, in.Twins = nil, 0
		if a := by[id]; a != nil {
			in.States, in.Twins = deskOrder(a.states), a.twins
		}
	}
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
