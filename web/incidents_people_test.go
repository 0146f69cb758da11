package web

import (
	"net/http"
	"slices"
	"testing"

	"golang.org/x/net/html"
)

// TestDesk_IncidentsBulkAssignPicksPeople: the Incidents page's bulk
// forms offer the people who can decide for their assignee, from the
// page's one list, as the queue's do; a viewer, who has no form, gets no
// list.
func TestDesk_IncidentsBulkAssignPicksPeople(t *testing.T) {
	d := newDesk(t)
	d.signedIn("ada", "bob", "vic")
	d.intoDesk("evt_incpick:crm_task", false)

	p := d.get("ada", "/desk/incidents").want(http.StatusOK)
	var offered []string
	for c := p.one("people-list").FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "option" {
			offered = append(offered, attr(c, "value"))
		}
	}
	if !slices.Contains(offered, "ada@example.com") || !slices.Contains(offered, "bob@example.com") || slices.Contains(offered, "vic@example.com") {
		t.Fatalf("the people offered: %v (a viewer cannot decide)", offered)
	}
	if got, want := attr(p.one("bulk-assignee"), "list"), attr(p.one("people-list"), "id"); got == "" || got != want {
		t.Errorf("the bulk form's assignee offers list %q, want %q", got, want)
	}
	d.get("vic", "/desk/incidents").want(http.StatusOK).none("people-list")
}
