package pages

import (
	"strconv"

	"github.com/opshandoff/handoff/views/components"
)

// RecoveryView is the overview's month of recovery work.
type RecoveryView struct {
	Days     int
	Resolved int // desk stays people ended, with a time to resolve
	P50, P90 string
	Trend    components.Chart // p50 and p90 per day

	// SettledByLookup are the outcomes Handoff's own lookups settled: no
	// person was asked. WaitSaved is the desk wait that spared, at
	// people's p50 time to resolve: an estimate, "" without resolutions.
	SettledByLookup int
	WaitSaved       string
	ByAssignee      []AssigneeRow
}

// AssigneeRow is one person's desk items.
type AssigneeRow struct {
	Assignee string
	Items    int
	Link     string // the queue of their items; "" for nobody
}

// LookupShare is the share of settled outcomes no person was asked about,
// as "67 %".
func (v RecoveryView) LookupShare() string {
	total := v.SettledByLookup + v.Resolved
	if total == 0 {
		return "0 %"
	}
	return strconv.Itoa((100*v.SettledByLookup+total/2)/total) + " %"
}
