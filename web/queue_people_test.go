package web

import (
	"net/http"
	"slices"
	"testing"

	"golang.org/x/net/html"
)

// TestDesk_QueueAssignPicksPeople: the queue's row assign and its bulk
// form offer the people who can decide, from one list on the page, not a
// blank for an email; a person picked from it is who the item goes to.
func TestDesk_QueueAssignPicksPeople(t *testing.T) {
	d := newDesk(t)
	d.signedIn("ada", "bob", "vic")
	op := d.intoDesk("evt_pick:crm_task", false)

	p := d.get("ada", "/desk/queue").want(http.StatusOK)
	var offered []string
	for c := p.one("people-list").FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "option" {
			offered = append(offered, attr(c, "value"))
		}
	}
	if !slices.Contains(offered, "ada@example.com") || !slices.Contains(offered, "bob@example.com") || slices.Contains(offered, "vic@example.com") {
		t.Fatalf("the people offered: %v (a viewer cannot decide)", offered)
	}
	list := attr(p.one("people-list"), "id")
	for _, field := range []string{"row-assignee-input", "bulk-assignee"} {
		if got := attr(p.one(field), "list"); got == "" || got != list {
			t.Errorf("%s offers list %q, want %q", field, got, list)
		}
	}

	form := inputs(p.one("row-assign"))
	form.Set("assignee", offered[slices.Index(offered, "bob@example.com")])
	form.Set("reason", "Bob owns the CRM")
	d.post("ada", "/desk/operations/"+op.ID+"/assign", form).want(http.StatusSeeOther)
	if got := d.state(op.ID); got.Assignee != "bob@example.com" || got.AssigneeSubject != "bob" {
		t.Fatalf("assigned to %q (%q)", got.Assignee, got.AssigneeSubject)
	}
}
