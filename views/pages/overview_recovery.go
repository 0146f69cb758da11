package pages

import "strconv"

// RecoveryView is the overview's last week of recovery work.
type RecoveryView struct {
	Days       int
	Resolved   int
	P50, P90   string
	PerDay     []DayRow
	ByAssignee []AssigneeRow

	// SettledByLookup are the outcomes Handoff's own lookups settled: no
	// person was asked. WaitSaved is the desk wait that spared, at
	// people's p50 time to resolve: an estimate, "" without resolutions.
	SettledByLookup int
	WaitSaved       string
}

// DayRow is one day's entries and resolutions.
type DayRow struct {
	Day                  string
	Entries, Resolutions int
}

// AssigneeRow is one person's unresolved items.
type AssigneeRow struct {
	Assignee string
	Items    int
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
