package pages

import (
	"time"

	"github.com/opshandoff/handoff/views/layouts"
)

// IncidentsView is the desk's items grouped by provider, type and error.
type IncidentsView struct {
	Frame     layouts.Frame
	Incidents []IncidentRow
	CanAct    bool
}

// IncidentRow is one incident.
type IncidentRow struct {
	Provider, Type, Error, Message string
	Count                          int
	States, Namespaces             string
	FirstSeen, LastSeen            time.Time
	ItemsURL                       string // the queue filtered to its items
	Filter                         QueueFilter
}
