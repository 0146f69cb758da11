package pages

// RecoveryView is the overview's last week of recovery work.
type RecoveryView struct {
	Days       int
	Resolved   int
	P50, P90   string
	PerDay     []DayRow
	ByAssignee []AssigneeRow
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
