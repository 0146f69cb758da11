package web

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// lookupAnswer is what a lookup event asked and was answered, without when:
// two lookups with the same answer are the same failure repeated.
func lookupAnswer(e domain.AuditEvent) (answer string, found bool) {
	var d struct {
		Result string `json:"result"`
		Tries  []struct {
			Method, URL, Summary string
		} `json:"tries"`
	}
	_ = json.Unmarshal(e.Detail, &d)
	var b strings.Builder
	for _, t := range d.Tries {
		b.WriteString(t.Method + " " + t.URL + " → " + t.Summary + "\n")
	}
	return b.String(), e.Action == domain.ActionLookedUp || d.Result == domain.LookupFoundDone.String()
}

// lookupRepeats counts the lookups in a row, the latest last, that found
// nothing with the same answer, and when the first of them was: five
// failed "Look up now" read as one failure, five times, not five.
func lookupRepeats(timeline []domain.AuditEvent) (int, time.Time) {
	var n int
	var latest string
	var since time.Time
	for i := len(timeline) - 1; i >= 0; i-- {
		e := timeline[i]
		if !slices.Contains(lookupActions, e.Action) {
			continue
		}
		answer, found := lookupAnswer(e)
		if found || (n > 0 && answer != latest) {
			break
		}
		latest, since = answer, e.At
		n++
	}
	return n, since
}

// groupTries folds tries in a row with the same request and answer into
// one row with their count, the first's time and the last's.
func groupTries(tries []pages.LookupTryRow) []pages.LookupTryRow {
	var out []pages.LookupTryRow
	for _, t := range tries {
		if k := len(out) - 1; k >= 0 && out[k].Request == t.Request && out[k].Summary == t.Summary {
			out[k].Count++
			out[k].Last = t.At
			continue
		}
		t.Count = 1
		out = append(out, t)
	}
	return out
}
