package domain

import (
	"context"
	"strings"
	"time"
)

// An incident is the desk's items that failed the same way: one type (so
// one provider), one error class and code. A mailer outage that left eight
// ECONNRESET timeouts is one incident, triaged and decided once. Incidents
// are kept (migration 00019): an item entering the desk joins its incident
// in the transaction that puts it there (incident_entry.go), and people
// triage it — acknowledge, own, note, resolve, ignore, reopen
// (incident_triage.go).

// ErrorKind is an error's class and code, the incident's signature.
type ErrorKind struct{ Class, Code string }

// String is "class:code", or the class alone without a code.
func (k ErrorKind) String() string {
	if k.Code == "" {
		return k.Class
	}
	return k.Class + ":" + k.Code
}

// ParseErrorKind reads "class:code" or "class".
func ParseErrorKind(s string) ErrorKind {
	class, code, _ := strings.Cut(s, ":")
	return ErrorKind{Class: class, Code: code}
}

// IncidentKey is an incident's identity: the type and the error kind.
type IncidentKey struct {
	Type  string
	Error ErrorKind
}

// IncidentStatus is where an incident's triage stands.
type IncidentStatus string

// The triage statuses: open → acknowledged → resolved or ignored; reopen
// brings a resolved or ignored incident back to open.
const (
	IncidentOpen         IncidentStatus = "open"
	IncidentAcknowledged IncidentStatus = "acknowledged"
	IncidentResolved     IncidentStatus = "resolved"
	IncidentIgnored      IncidentStatus = "ignored"
)

// Active reports whether the incident still asks for attention.
func (s IncidentStatus) Active() bool { return s == IncidentOpen || s == IncidentAcknowledged }

// ParseIncidentStatus reads a status name.
func ParseIncidentStatus(s string) (IncidentStatus, bool) {
	switch st := IncidentStatus(s); st {
	case IncidentOpen, IncidentAcknowledged, IncidentResolved, IncidentIgnored:
		return st, true
	}
	return "", false
}

// Incident is one kept incident.
type Incident struct {
	ID string
	IncidentKey
	Provider   string   // from the type's card, filled by the Ledger
	Namespaces []string // every namespace an item came from, sorted
	Message    string   // the latest item's error message
	FirstSeen  time.Time
	LastSeen   time.Time
	OpenItems  int // items on the desk now
	TotalItems int // distinct items that ever joined
	// OpenIn counts the open items by the state each entered in. An item
	// keeps that state while it is open: any move out of it takes the item
	// off the desk and out of the incident (followUp), so the count is kept
	// with the incident instead of read from every item.
	OpenIn map[State]int
	// Twins counts the open items a registration of the same content
	// under another key waits on (twin_unresolved; a read fills it).
	Twins  int
	Status IncidentStatus
	// AcknowledgedBy and AcknowledgedAt say who acknowledged it; cleared by
	// a reopen.
	AcknowledgedBy string
	AcknowledgedAt *time.Time
	Owner          Person // nobody: zero
	// StatusBy and StatusAt say who last resolved, ignored or reopened it
	// ("" by: Handoff, when its last item was decided).
	StatusBy string
	StatusAt *time.Time
	// NotifiedAt and NotifiedTotal are the last notice's time and the
	// total it announced: what growth notices are coalesced against.
	NotifiedAt    *time.Time
	NotifiedTotal int
	Version       int64
}

// States are the open items' states, in DeskStates order.
func (in Incident) States() []State {
	var out []State
	for _, s := range DeskStates {
		if in.OpenIn[s] > 0 {
			out = append(out, s)
		}
	}
	return out
}

// IncidentItem is one item of an incident as its page lists it: never the
// content, which content_visible_to may keep from the reader.
type IncidentItem struct {
	OperationID string
	Key         string
	Namespace   string
	State       State
	Version     int64
	Error       ErrorKind
	Message     string
	EnteredAt   time.Time
	Open        bool // still on the desk in this incident
	// Twin says a registration of the same content under another key
	// waits for a person because of this one (twin_unresolved).
	Twin bool
}

// IncidentEvent is one line of an incident's timeline: a triage action or
// note by a person, or Handoff's own (auto-resolve).
type IncidentEvent struct {
	ID         string
	IncidentID string
	At         time.Time
	Actor      string // the person's identity; "" for Handoff
	Action     string
	Text       string // the reason or note
	Detail     string // e.g. the owner chosen
	AuditID    string // the audit event recording it, for a person's action
}

// IncidentStore keeps incidents; the store package implements it.
type IncidentStore interface {
	// Incidents lists every incident, active ones first, each with its
	// open items' states.
	Incidents(ctx context.Context) ([]Incident, error)
	// Incident reads one incident, its items (open first, up to limit)
	// and its timeline.
	Incident(ctx context.Context, id string, limit int) (Incident, []IncidentItem, []IncidentEvent, error)
	// TriageIncident loads the incident in a transaction, lets decide
	// change it, and writes the incident (compare-and-set on its version),
	// the timeline event and the audit event on the system stream.
	TriageIncident(ctx context.Context, id string, decide func(Incident, time.Time) (Incident, IncidentEvent, AuditEvent, error)) (Incident, error)
}

// MaxIncidentItems bounds the items an incident page lists (and its bulk
// form decides at once).
const MaxIncidentItems = MaxBatch

// Incidents holds the desk's use cases of incidents: the list, one
// incident, and a person's triage of it.
type Incidents struct {
	*core
	store IncidentsStorage
}

// IncidentsStorage is the store methods Incidents calls. The store package
// implements it.
type IncidentsStorage interface {
	IncidentStore
	personReader
}

// NewIncidents builds the incidents' use cases on s with the real clock.
func NewIncidents(s IncidentsStorage, cards Cards) *Incidents {
	return newIncidents(newCore(nil, cards), s)
}

func newIncidents(c *core, s IncidentsStorage) *Incidents { return &Incidents{core: c, store: s} }

// DeskIncidents lists the kept incidents, active ones first.
func (l *Incidents) DeskIncidents(ctx context.Context, actor Actor) ([]Incident, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	list, err := l.store.Incidents(ctx)
	for i := range list {
		l.withProvider(&list[i])
	}
	return list, err
}

// DeskIncident reads one incident with its items and timeline.
func (l *Incidents) DeskIncident(ctx context.Context, actor Actor, id string) (Incident, []IncidentItem, []IncidentEvent, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return Incident{}, nil, nil, err
	}
	in, items, events, err := l.store.Incident(ctx, id, MaxIncidentItems)
	l.withProvider(&in)
	return in, items, events, err
}

func (l *Incidents) withProvider(in *Incident) {
	if card, err := l.Cards.Get(in.Type); err == nil {
		in.Provider = card.Provider
	}
}
