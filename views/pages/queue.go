package pages

import (
	"strconv"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/layouts"
)

// QueueView is the desk's queue: the items only a person can resolve.
type QueueView struct {
	Frame   layouts.Frame
	Filter  QueueFilter
	States  []Option
	Types   []Option
	Provs   []Option
	Ages    []Option
	Sorts   []Option // the orders the page offers (QueueFilter.Sort)
	Rows    []QueueRow
	Next    string    // the next page's URL; "" on the last page
	Self    string    // this page's URL with its filter, where actions return to
	CanAct  bool      // the viewer may take and assign items
	Problem string    // a filter that could not be read
	Stale   *Stale    // a Take refused because the item had changed
	All     bool      // the Operations page: every state, searched deeper
	Updated time.Time // when the list was read, shown beside its refresh
	// People are who an item can be assigned to, offered by the row's
	// and the bulk form's assignee field (PeopleList) instead of a blank.
	People []PersonOption
	// Wider is the Operations page's search for the queue's search text:
	// every state, operation and attempt IDs and the content too.
	Wider string
	// Found is the operation the queue's search text is the ID of, when
	// the queue itself does not list it.
	Found *QueueRow
	// NavCounts are the navigation's counts, sent with a refreshed
	// fragment of the queue; nil on a whole page, which has its own.
	NavCounts *layouts.DeskCounts
	// Total counts every page's items, up to TotalBound; more counts
	// TotalBound+1, said as "more than"; below 0, it could not be counted.
	Total int
	// Matching is Total where the person may act and it is exact: the N
	// of "select all N matching"; 0 otherwise.
	Matching int
	Views    SavedViews // the page's saved views; zero where there are none to show
	// First and Prev are the first and the previous page's URLs, when
	// this is a later one.
	First, Prev string
}

// TotalBound is how far the list's total is counted: the queue's items
// are few (the bound lets select all say how many are left past one
// batch's 1,000); on the Operations page, over every state, counting costs a
// walk of that many matches (at 100,000 operations on PostgreSQL, a common
// error text's count of 1,000 added about 85 ms to the page).
func (v QueueView) TotalBound() int {
	if v.All {
		return 200
	}
	return 10000
}

// TotalText says how many items the filter matches on every page.
func (v QueueView) TotalText() string {
	noun := map[bool]string{true: "operation", false: "item"}[v.All]
	switch {
	case v.Total > v.TotalBound():
		return "More than " + strconv.Itoa(v.TotalBound()) + " " + noun + "s match."
	case v.Total == 1:
		return "1 " + noun + " matches."
	}
	return strconv.Itoa(v.Total) + " " + noun + "s match."
}

// MaxBatch is how many items one bulk decision takes at most.
const MaxBatch = domain.MaxBatch

// Path is the page's own address.
func (v QueueView) Path() string {
	if v.All {
		return domain.DeskOperations
	}
	return "/desk/queue"
}

// Stale is an item someone changed before the person's decision on it.
type Stale struct {
	ID, Key string
	Changes []string // who changed what, and when
}

// QueueFilter is the queue's filter as the URL carries it.
type QueueFilter struct {
	Q, State, Type, Provider, Namespace, Assignee, Age string
	Error                                              string // an incident's error, class:code
	Mine                                               bool
	// Within, Entered and Resolved are the overview's bounds (as Age, a
	// duration): in the desk for less than, handed to a person or decided
	// by one within (queue_window.templ).
	Within, Entered, Resolved string
	// Sort is the list's order: oldest (the default, ""), newest, or
	// changed (the last change first; the queue only).
	Sort string
}

// Option is one choice of a select.
type Option struct{ Value, Label string }

// QueueRow is one desk item.
type QueueRow struct {
	ID, Key, Type, Provider, Namespace, EventID, State string
	Summary                                            []components.SummaryField // the card's summary fields, where the viewer may read the content
	LastError, Assignee, NextDecision, Age             string
	Attempts                                           int
	Version                                            int64
	CreatedAt                                          time.Time
	Since                                              time.Time // when it entered the desk; Age counts from it
	Mine                                               bool      // assigned to the viewer
	// Twin marks an item held because it may be a second execution of
	// another (twin_unresolved, supersedes_sent) or a revision waiting for
	// the earlier send's outcome; "" otherwise.
	Twin string
	Hold string // the badge's word for Twin's hold: twin, supersedes, waits
}

// activeFilters counts the filters in use for the folded filter's summary:
// " (2 in use)", or "" for none.
func activeFilters(f QueueFilter) string {
	n := 0
	for _, v := range []string{f.Q, f.State, f.Type, f.Provider, f.Namespace, f.Assignee, f.Age, f.Error, f.Within, f.Entered, f.Resolved} {
		if v != "" {
			n++
		}
	}
	if f.Mine {
		n++
	}
	if n == 0 {
		return ""
	}
	return " (" + strconv.Itoa(n) + " in use)"
}

// ageHeading names the age column: the queue counts time in the desk; the
// Operations page lists items in every state, completed ones too, so it
// says only "Age".
func ageHeading(all bool) string {
	if all {
		return "Age"
	}
	return "In the desk for"
}

// ageTitle is the age's exact start, on hover.
func ageTitle(all bool, since time.Time) string {
	if all {
		return "since " + components.UTCText(since)
	}
	return "in the desk since " + components.UTCText(since)
}
