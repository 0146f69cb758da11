package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// A card's summary fields are shown beside each key in the queue, on the
// incident's items and in a bulk preview — and nowhere where the card
// keeps the content from the viewer. Long keys are shortened in the
// middle, the full key in the link's title and for screen readers.
func TestDesk_SummaryFieldsAndShortKeys(t *testing.T) {
	key := "tenant-eu-west-1/shop-7781/checkout-2026-12-06/charge:order_2026-12-06_88101"
	for _, tc := range []struct {
		name    string
		visible domain.Role
		who     string
		shown   bool
	}{
		{"visible", domain.Role{}, "ada", true},
		{"visible to a viewer", domain.Role{}, "vic", true},
		{"hidden from a viewer", domain.RoleOperator, "vic", false},
		{"hidden from an approver", domain.RoleAdmin, "ada", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cards := testCards()
			crm := cards["crm.task.create"]
			crm.Summary, crm.ContentVisibleTo = []string{"/owner", "/title", "/missing"}, tc.visible
			cards[crm.Name] = crm
			d := newDeskWith(t, cards)
			d.intoDesk(key, true)
			d.intoDesk("evt_2:crm_task", true)

			q := d.get(tc.who, "/desk/queue").want(http.StatusOK)
			link := q.all("row-link")[0]
			for _, l := range q.all("row-link") {
				if attr(l, "title") == key {
					link = l
				}
			}
			if attr(link, "title") != key || !strings.Contains(text(link), "tenant-eu-west-1/…/charge:order_2026-12-06_88101") ||
				!strings.Contains(text(link), key) {
				t.Fatalf("the queue's key: title %q, text %q", attr(link, "title"), text(link))
			}
			incident := "/desk/incidents/" + d.incidentOf()
			pages := []answer{q, d.get(tc.who, incident).want(http.StatusOK)}
			if tc.who == "ada" {
				form := inputs(d.get("ada", incident).one("bulk-incident-items"))
				form.Set("decision", "note")
				form.Set("reason", "looking")
				pages = append(pages, d.post("ada", "/desk/batch/preview", form).want(http.StatusOK))
			}
			for i, p := range pages {
				got := p.all("summary")
				if !tc.shown {
					if len(got) != 0 || strings.Contains(p.body, "u_9") {
						t.Fatalf("page %d shows the hidden content: %d summaries", i, len(got))
					}
					continue
				}
				if len(got) != 2 || text(got[0]) != "owner u_9 · title Follow up" {
					t.Fatalf("page %d: %d summaries, the first %q", i, len(got), text(got[0]))
				}
			}
		})
	}
}
