package pages

import "github.com/opshandoff/handoff/views/layouts"

// AuditView is the audit trail across operations, in write order.
type AuditView struct {
	Frame   layouts.Frame
	Filter  AuditFilter
	Actions []Option
	Rows    []EventRow
	Next    string
	Problem string
	// ActorNote says which person a part of a name was read as, or that
	// it is part of several people's.
	ActorNote string
	// ExportCSV and ExportJSONL link to an export of what the filter
	// selects; empty for people who may not export.
	ExportCSV, ExportJSONL string
	Views                  SavedViews // the page's saved views; zero where there are none to show
	// Zone is the zone the From and To fields are read in: "UTC", or
	// "local" when times show in the browser's zone.
	Zone string
}

// AuditFilter is the audit page's filter as the URL carries it.
type AuditFilter struct {
	Operation, Actor, Action, From, To string
	People                             bool // only what people did
}
