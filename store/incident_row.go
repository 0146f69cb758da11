package store

import (
	"encoding/json"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// incidentRow is one incident (migration 00019).
type incidentRow struct {
	ID         string `gorm:"primaryKey"`
	Type       string
	ErrorClass string
	ErrorCode  string
	Namespaces string // a JSON array
	Message    string
	FirstSeen  time.Time
	LastSeen   time.Time
	OpenItems  int
	// The open items by state (domain.Incident's OpenIn, migration 00033).
	OpenUnknownOutcome int
	OpenFailedTerminal int
	TotalItems         int
	Status             string
	AcknowledgedBy     string
	AcknowledgedAt     *time.Time
	Owner              string
	OwnerIssuer        string
	OwnerSubject       string
	OwnerName          string
	StatusBy           string
	StatusAt           *time.Time
	NotifiedAt         *time.Time
	NotifiedTotal      int
	Version            int64
}

func (incidentRow) TableName() string { return "incidents" }

// incidentItemRow says an operation is (or was) one of an incident's items.
type incidentItemRow struct {
	IncidentID  string `gorm:"primaryKey"`
	OperationID string `gorm:"primaryKey"`
	EnteredAt   time.Time
	LeftAt      *time.Time
}

func (incidentItemRow) TableName() string { return "incident_items" }

// incidentEventRow is one line of an incident's timeline.
type incidentEventRow struct {
	ID         string `gorm:"primaryKey"`
	IncidentID string
	At         time.Time
	Actor      string
	Action     string
	Text       string
	Detail     string
	AuditID    string
}

func (incidentEventRow) TableName() string { return "incident_events" }

func toIncidentRow(in domain.Incident) incidentRow {
	ns, _ := json.Marshal(in.Namespaces)
	if in.Namespaces == nil {
		ns = []byte("[]")
	}
	return incidentRow{ID: in.ID, Type: in.Type, ErrorClass: in.Error.Class, ErrorCode: in.Error.Code, Namespaces: string(ns),
		Message: in.Message, FirstSeen: in.FirstSeen.UTC(), LastSeen: in.LastSeen.UTC(), OpenItems: in.OpenItems,
		OpenUnknownOutcome: in.OpenIn[domain.UnknownOutcome], OpenFailedTerminal: in.OpenIn[domain.FailedTerminal],
		TotalItems: in.TotalItems, Status: string(in.Status), AcknowledgedBy: in.AcknowledgedBy, AcknowledgedAt: utcPtr(in.AcknowledgedAt),
		Owner: in.Owner.Email, OwnerIssuer: in.Owner.Issuer, OwnerSubject: in.Owner.Subject, OwnerName: in.Owner.Name,
		StatusBy: in.StatusBy, StatusAt: utcPtr(in.StatusAt), NotifiedAt: utcPtr(in.NotifiedAt), NotifiedTotal: in.NotifiedTotal,
		Version: in.Version}
}

func (r incidentRow) toDomain() domain.Incident {
	in := domain.Incident{ID: r.ID, IncidentKey: domain.IncidentKey{Type: r.Type, Error: domain.ErrorKind{Class: r.ErrorClass, Code: r.ErrorCode}},
		Message: r.Message, FirstSeen: r.FirstSeen.UTC(), LastSeen: r.LastSeen.UTC(), OpenItems: r.OpenItems, TotalItems: r.TotalItems,
		Status: domain.IncidentStatus(r.Status), AcknowledgedBy: r.AcknowledgedBy, AcknowledgedAt: utcPtr(r.AcknowledgedAt),
		Owner:    domain.Person{Issuer: r.OwnerIssuer, Subject: r.OwnerSubject, Email: r.Owner, Name: r.OwnerName},
		StatusBy: r.StatusBy, StatusAt: utcPtr(r.StatusAt), NotifiedAt: utcPtr(r.NotifiedAt), NotifiedTotal: r.NotifiedTotal,
		Version: r.Version}
	in.OpenIn = map[domain.State]int{}
	for s, n := range map[domain.State]int{domain.UnknownOutcome: r.OpenUnknownOutcome, domain.FailedTerminal: r.OpenFailedTerminal} {
		if n > 0 {
			in.OpenIn[s] = n
		}
	}
	_ = json.Unmarshal([]byte(r.Namespaces), &in.Namespaces)
	return in
}

func toIncidentEventRow(e domain.IncidentEvent) incidentEventRow {
	return incidentEventRow{ID: e.ID, IncidentID: e.IncidentID, At: e.At.UTC(), Actor: e.Actor, Action: e.Action,
		Text: e.Text, Detail: e.Detail, AuditID: e.AuditID}
}

func (r incidentEventRow) toDomain() domain.IncidentEvent {
	return domain.IncidentEvent{ID: r.ID, IncidentID: r.IncidentID, At: r.At.UTC(), Actor: r.Actor, Action: r.Action,
		Text: r.Text, Detail: r.Detail, AuditID: r.AuditID}
}
