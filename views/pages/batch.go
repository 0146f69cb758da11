package pages

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/layouts"
)

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
	// Matching is, for "every item matching the filter", how many the
	// filter matched when previewed; 0 for a selection. When it is more
	// than the items, the batch took the oldest MaxBatch.
	Matching int
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
	Summary                         []components.SummaryField
	Risk                            string // why retrying this item may do it twice
	Version                         int64  // the version the decision is taken on
}

// The bulk form's decisions, each with the states it is valid for; nil
// means every state. The safest come first: those that send nothing
// again, then the re-send the provider deduplicates, then the retries that
// may do the side effect twice (which ask for confirmation at the
// preview). None is preselected: the form starts on "choose".
var bulkDecisions = []struct {
	Option
	states []string
}{
	{Option{"not_executed_cancel", "confirm not executed, then cancel"}, []string{"unknown_outcome"}},
	{Option{"cancel", "cancel a terminal failure"}, []string{"failed_terminal"}},
	{Option{"assign", "assign"}, nil},
	{Option{"note", "add a note"}, nil},
	{Option{"resend_same_key", "re-send under the same provider key (where the provider still deduplicates it)"}, []string{"unknown_outcome"}},
	{Option{"retry", "retry a terminal failure"}, []string{"failed_terminal"}},
	{Option{"not_executed_retry", "confirm not executed, then retry"}, []string{"unknown_outcome"}},
}

// BulkDecisions are the decisions the bulk form offers for items in the
// given states (comma-separated, as an incident lists them): only those
// valid for at least one of them, safest first. With no states (a
// selection of anything) it offers all.
func BulkDecisions(states string) []Option {
	var out []Option
	have := strings.Split(states, ", ")
	for _, d := range bulkDecisions {
		if states == "" || d.states == nil || slices.ContainsFunc(d.states, func(s string) bool { return slices.Contains(have, s) }) {
			out = append(out, d.Option)
		}
	}
	return out
}

// sendsAgain reports whether a bulk decision may send the side effect
// again: never the form's default.
func sendsAgain(decision string) bool {
	switch decision {
	case "resend_same_key", "retry", "not_executed_retry":
		return true
	}
	return false
}

// backWords names the page a bulk preview goes back to.
func backWords(back string) string {
	if strings.HasPrefix(back, "/desk/incidents/") {
		return "Back to the incident"
	}
	return "Back to the queue"
}

// thousands writes n with a comma between thousands: 1,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
