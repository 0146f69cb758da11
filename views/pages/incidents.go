package pages

import (
	"time"

	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/layouts"
)

// IncidentsView is the kept incidents, active ones first.
type IncidentsView struct {
	Frame     layouts.Frame
	Incidents []IncidentRow
	CanAct    bool
	// People are who the bulk forms' assignee field suggests (PeopleList),
	// as on the queue.
	People []PersonOption
}

// IncidentRow is one incident in the list.
type IncidentRow struct {
	ID, URL                        string // the incident's page
	Provider, Type, Error, Message string
	Status                         string
	Active                         bool
	Owner                          string
	OpenItems, TotalItems, Twins   int
	States, Namespaces             string
	FirstSeen, LastSeen            time.Time
	ItemsURL                       string // the queue filtered to its items
	Filter                         QueueFilter
}

// IncidentView is one incident's page: its record, its items, its
// timeline and the triage forms.
type IncidentView struct {
	Frame   layouts.Frame
	In      IncidentRow
	AckBy   string
	AckAt   *time.Time
	By      string // who last resolved, ignored or reopened it; "" for Handoff
	At      *time.Time
	Version int64
	Items   []IncidentItemRow
	// Open are the open items as "id:version", what the bulk form decides.
	Open     []string
	Events   []IncidentEventRow
	CanAct   bool
	People   []PersonOption
	OwnerVal string // the current owner's PersonOption value
	Done     string // the triage just recorded, for the status line
	Problem  string
	Draft    IncidentDraft // what the refused form carried
}

// IncidentDraft is a refused triage form's text, shown again.
type IncidentDraft struct{ Form, Text string }

// For is the draft text of the form named, if it was that form.
func (d IncidentDraft) For(form string) string {
	if d.Form == form {
		return d.Text
	}
	return ""
}

// IncidentItemRow is one of an incident's items: keys, states, errors —
// never content.
type IncidentItemRow struct {
	ID, Key, Namespace, State, Error, Message string
	Summary                                   []components.SummaryField
	EnteredAt                                 time.Time
	Open, Twin                                bool
}

// IncidentEventRow is one line of the incident's timeline.
type IncidentEventRow struct {
	At                time.Time
	Actor, What, Text string
	Audited           bool
}

// IncidentURL is an incident's page.
func IncidentURL(id string) string { return "/desk/incidents/" + id }
