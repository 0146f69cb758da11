package pages

import (
	"strconv"

	"github.com/opshandoff/handoff/views/layouts"
)

// SavedViews is a list page's saved views and the form that saves its
// current filter as one.
type SavedViews struct {
	Page   string            // queue, operations or audit
	Filter map[string]string // the page's filter now, each field in use
	Return string            // the page as it is now, where a change returns
	Rows   []SavedViewRow
}

// SavedViewRow is one saved view the person may open.
type SavedViewRow struct {
	ID, Name string
	URL      string // the page with exactly the view's filter
	Owner    string // who saved it; "" for the person's own
	Shared   bool
	Mine     bool
	// CanChange says the person may rename or delete it: its owner, or an
	// admin for a shared one.
	CanChange bool
}

// ViewRefusedView says why a saved view was not saved, changed or
// deleted.
type ViewRefusedView struct {
	Frame   layouts.Frame
	Message string
	Back    string
}

// viewCount is the list's size for its summary.
func (v SavedViews) viewCount() string {
	mine, shared := 0, 0
	for _, r := range v.Rows {
		if r.Mine {
			mine++
		} else {
			shared++
		}
	}
	return " (" + strconv.Itoa(mine) + " yours, " + strconv.Itoa(shared) + " shared)"
}
