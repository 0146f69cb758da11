package pages

import (
	"time"

	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/layouts"
)

// OverviewView is the desk at a glance: figures read in one snapshot, each
// linking to the list it counts (domain.Overview defines them).
type OverviewView struct {
	Frame   layouts.Frame
	Now     time.Time
	Type    string   // the type the figures are of; "" every type
	Types   []Option // the type filter's choices
	Self    string   // the overview's address with its filter, for the refresh
	Figures []Figure
	States  []StateCount
	Bands   []BandCount
	// AwaitingLookup are the unknown outcomes Handoff's lookup is still
	// on: in no person's list, so counted apart.
	AwaitingLookup int
	Hourly, Daily  components.Chart // entries and decisions
	Ages           components.Chart
	Latest         []EntryRow
	LatestAll      string // the list of every entry the latest are from
	Oldest         *QueueRow
	Recovery       RecoveryView
}

// Figure is one headline number and the list it counts.
type Figure struct {
	Label, Link, TestID string
	N                   int
}

// StateCount is how many operations are in one state.
type StateCount struct {
	State  string
	N      int
	InDesk bool
	Link   string // the queue or the Operations page filtered to this state
}

// BandCount is how many desk items fall in one age band.
type BandCount struct {
	Label string
	N     int
	Link  string
}

// EntryRow is one entry into the desk.
type EntryRow struct {
	ID, Key, Type, State string
	At                   time.Time
}
