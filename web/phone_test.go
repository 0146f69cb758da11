package web

import (
	"net/http"
	"testing"
)

// TestDesk_PhoneFilters: the queue's filters sit in a "Filters" fold that
// says how many are in use (desk.js folds it on a phone), and each row's
// checkbox is inside a label, so the label is the tap target.
func TestDesk_PhoneFilters(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	for _, c := range []struct{ target, summary string }{
		{"/desk/queue", "Filters"},
		{"/desk/queue?state=unknown_outcome&mine=1", "Filters (2 in use)"},
		{"/desk/operations?q=evt_1", "Filters (1 in use)"},
	} {
		p := d.get("ada", c.target).want(http.StatusOK)
		fold := p.one("queue-filters")
		if fold.Data != "details" || !hasAttr(fold, "open") || !hasAttr(fold, "data-filters") {
			t.Fatalf("%s: the filters are in <%s>, want an open <details data-filters>", c.target, fold.Data)
		}
		var summary string
		for n := fold.FirstChild; n != nil; n = n.NextSibling {
			if n.Data == "summary" {
				summary = text(n)
			}
		}
		if summary != c.summary {
			t.Fatalf("%s: the fold says %q, want %q", c.target, summary, c.summary)
		}
	}
	box := d.get("ada", "/desk/queue").one("row-select")
	if box.Parent.Data != "label" || text(box.Parent) != "select "+op.Key {
		t.Fatalf("the row's checkbox is in <%s> %q, want a label naming the item", box.Parent.Data, text(box.Parent))
	}
}
