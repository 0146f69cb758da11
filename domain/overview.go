package domain

import (
	"context"
	"time"
)

// The overview's figures, read in one snapshot so that they agree with each
// other and with the lists they link to. Each figure is defined here, once,
// in the terms the lists filter by:
//
//   - in the desk now: operations in a desk state (DeskStates), less those
//     awaiting Handoff's own lookup (AwaitingLookup) — the queue's items;
//   - per state: operations in the state now, the same lookup rule applied
//     to unknown_outcome — the Operations page filtered to that state;
//   - age band: desk items whose wait (desk entry, or creation for an item
//     that has none) falls in [lower, upper) — the queue's age and within;
//   - handed to a person within a window: operations whose last desk or
//     approval entry (DeskEnteredAt) is within it, in any state now — the
//     Operations page's entered filter;
//   - decided by a person within a window: operations whose last person's
//     resolution (Resolution.At: a desk decision, or an approval rejected;
//     an approval given is no resolution) is within it — the resolved
//     filter;
//   - awaiting approval: the state's count, as per state.
//
// An operation counts once per figure however often it came back: the
// figures count operations, as the lists list them.

// OverviewStore reads the overview; the store package implements it.
type OverviewStore interface {
	Overview(ctx context.Context, q OverviewQuery) (Overview, error)
}

// OverviewQuery asks for the overview's figures.
type OverviewQuery struct {
	Type             string          // one type's figures; "" every type
	AwaitingLookupOf []string        // the types whose unknown outcomes may await a lookup
	Bands            []time.Duration // the age bands' upper bounds; 0 for the last, unbounded one
	Hours            int             // hourly buckets, newest last
	Days             int             // calendar days (UTC), today last
	Latest           int             // how many recent entries to list
}

// Overview is the desk at a glance, as of Now.
type Overview struct {
	Now            time.Time // the database's clock
	ByState        map[State]int
	AwaitingLookup int   // unknown outcomes awaiting Handoff's lookup, in no list
	AgeBands       []int // desk items per band of OverviewQuery.Bands
	// EnteredHours and ResolvedHours are the operations handed to a person
	// and decided by one within the hourly window: the PerHour sums.
	EnteredHours, ResolvedHours int
	PerHour                     []Flow // oldest first; Start is Now less whole hours
	PerDay                      []Flow // oldest first; Start is the day's midnight UTC
	// EnteredDays and ResolvedDays are the operations handed to a person
	// and decided by one since the first day's midnight: the PerDay sums.
	EnteredDays, ResolvedDays int
	// P50 and P90 are the desk stays the decisions since the first day
	// ended (desk entry to resolution), nearest rank.
	P50, P90        time.Duration
	SettledByLookup int // lookups' conclusions that needed no person since the first day
	ByAssignee      []AssigneeLoad
	Latest          []DeskEntry // the latest entries, newest first
	Oldest          *Operation  // the desk item created first: the queue's first row
}

// InDesk is how many items the queue holds.
func (o Overview) InDesk() int {
	n := 0
	for _, s := range DeskStates {
		n += o.ByState[s]
	}
	return n
}

// Flow is one bucket's entries and decisions, with the day's time to
// resolve (zero when nothing was decided).
type Flow struct {
	Start             time.Time
	Entered, Resolved int
	P50, P90          time.Duration
}

// OverviewHours and OverviewDays are the overview's windows: the last day
// hour by hour, the last month day by day.
const (
	OverviewHours = 24
	OverviewDays  = 30
)

// Overview reads the overview for a person, of one type or of all.
func (l *Desk) Overview(ctx context.Context, actor Actor, typ string) (Overview, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return Overview{}, err
	}
	if typ != "" {
		if _, err := l.Cards.Get(typ); err != nil {
			return Overview{}, Invalid(FieldError{Field: "type", Message: "is not a configured type"})
		}
	}
	bands := make([]time.Duration, len(DeskAgeBands))
	for i, b := range DeskAgeBands {
		bands[i] = b.Under
	}
	return l.store.Overview(ctx, OverviewQuery{Type: typ, AwaitingLookupOf: l.Cards.LookupTypes(), Bands: bands,
		Hours: OverviewHours, Days: OverviewDays, Latest: 10})
}
