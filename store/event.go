package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm/clause"
)

// eventRow is one incoming event.
type eventRow struct {
	Namespace     string `gorm:"column:namespace;primaryKey"`
	EventID       string `gorm:"column:event_id;primaryKey"`
	Source        string
	CorrelationID string
	Fingerprint   string
	Actions       string // JSON: [{"action","type","content"}]
	ReceivedAt    time.Time
}

func (eventRow) TableName() string { return "events" }

type actionJSON struct {
	Action  string          `json:"action"`
	Type    string          `json:"type"`
	Content json.RawMessage `json:"content"`
}

// SaveEvent records the event unless its ID is known in the namespace.
func (s *Store) SaveEvent(ctx context.Context, e domain.Event) (domain.Event, bool, error) {
	actions := make([]actionJSON, len(e.Actions))
	for i, a := range e.Actions {
		actions[i] = actionJSON{a.Action, a.Type, a.Content}
	}
	raw, err := json.Marshal(actions)
	if err != nil {
		return domain.Event{}, false, domain.Wrap(domain.EInternal, err, "event actions do not marshal")
	}
	row := eventRow{Namespace: e.Namespace, EventID: e.EventID, Source: e.Source, CorrelationID: e.CorrelationID,
		Fingerprint: e.Fingerprint, Actions: string(raw), ReceivedAt: e.ReceivedAt.UTC()}
	res := s.db.WithContext(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&row)
	if res.Error != nil {
		return domain.Event{}, false, translate(res.Error, "event")
	}
	if res.RowsAffected == 1 {
		return e, true, nil
	}
	stored, err := s.GetEvent(ctx, e.Namespace, e.EventID)
	return stored, false, err
}

// GetEvent returns the event with the ID, within the namespace if one is given.
func (s *Store) GetEvent(ctx context.Context, namespace, eventID string) (domain.Event, error) {
	var row eventRow
	q := s.db.WithContext(ctx).Where("event_id = ?", eventID)
	if namespace != "" {
		q = q.Where("namespace = ?", namespace)
	}
	if err := q.Take(&row).Error; err != nil {
		return domain.Event{}, translate(err, "event")
	}
	var actions []actionJSON
	if err := json.Unmarshal([]byte(row.Actions), &actions); err != nil {
		return domain.Event{}, domain.Wrap(domain.EInternal, err, "unreadable event row")
	}
	e := domain.Event{Namespace: row.Namespace, EventID: row.EventID, Source: row.Source, CorrelationID: row.CorrelationID,
		Fingerprint: row.Fingerprint, ReceivedAt: row.ReceivedAt.UTC()}
	for _, a := range actions {
		e.Actions = append(e.Actions, domain.EventAction{Action: a.Action, Type: a.Type, Content: a.Content})
	}
	return e, nil
}
