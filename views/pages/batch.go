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

// BatchView is a bulk decision's preview, or its result.
type BatchView struct {
	Frame    layouts.Frame
	ID       string
	Preview  bool
	Decision string // what the decision does, in words
	Fields   BatchFields
	Items    []BatchRow
	Applied  int
	Skipped  int
	Failed   int // items a fault stopped, not a refusal
	Problem  string
	Back     string // the queue the person came from
	Risky    bool   // some item's retry may do its side effect twice: applying asks for confirmation
	// By, At and Reason say who applied a kept batch, when and why; empty
	// on a preview and on a result that could not be kept.
	By     string
	At     time.Time
	Reason string
}

// BatchFields are the decision's form fields, carried from the preview to
// the apply.
type BatchFields struct{ Decision, Assignee, Reason string }

// BatchRow is one item of a batch.
type BatchRow struct {
	ID, Key, From, To, Outcome, Why string
	Risk                            string // why retrying this item may do it twice
	Version                         int64  // the version the decision is taken on
}
