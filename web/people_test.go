package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDesk_AssignFromPeople: the operation page offers the people who signed
// in with a role that can decide, the viewer first; choosing one assigns
// the item to them, their "Mine" lists it, and someone else deciding on it
// is warned. Someone who never signed in cannot be assigned.
func TestDesk_AssignFromPeople(t *testing.T) {
	d := newDesk(t)
	d.signedIn("ada", "bob", "vic")
	op := d.intoDesk("evt_1:crm_task", false)

	p := d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)
	var values, labels []string
	selected := ""
	for c := p.one("assignee-select").FirstChild; c != nil; c = c.NextSibling {
		if c.Data != "option" {
			continue
		}
		values, labels = append(values, attr(c, "value")), append(labels, text(c))
		if hasAttr(c, "selected") {
			selected = attr(c, "value")
		}
	}
	// Each is named by (issuer, subject): an email may name two people.
	adaValue, bobValue := url.Values{"iss": {""}, "sub": {"ada"}}.Encode(), url.Values{"iss": {""}, "sub": {"bob"}}.Encode()
	if got := strings.Join(values, ","); got != ","+adaValue+","+bobValue {
		t.Fatalf("options %q %q: the viewer Vic must not be offered", got, labels)
	}
	if labels[1] != "Ada Lovelace <ada@example.com> (you)" || labels[2] != "Bob Builder <bob@example.com>" || selected != adaValue {
		t.Fatalf("labels %q, selected %q", labels, selected)
	}

	form := inputs(p.one("form-assign"))
	form.Set("assignee", "vic@example.com")
	form.Set("reason", "Vic is around")
	r := d.post("ada", "/desk/operations/"+op.ID+"/assign", form).refused(http.StatusUnprocessableEntity)
	if !strings.Contains(r.text("problem"), "Vic Viewer <vic@example.com> is a viewer and cannot decide") {
		t.Fatalf("viewer assignee: %q", r.text("problem"))
	}
	form.Set("assignee", bobValue)
	form.Set("reason", "Bob knows the CRM")
	d.post("ada", "/desk/operations/"+op.ID+"/assign", form).want(http.StatusSeeOther)

	if rows := d.get("bob", "/desk/queue?mine=1").all("queue-row"); len(rows) != 1 {
		t.Fatalf("bob's queue has %d", len(rows))
	}
	if rows := d.get("ada", "/desk/queue?mine=1").all("queue-row"); len(rows) != 0 {
		t.Fatalf("ada's queue has %d", len(rows))
	}
	if got := d.get("ada", "/desk/operations/"+op.ID).text("assigned-elsewhere"); !strings.Contains(got, "bob@example.com has taken this item") {
		t.Fatalf("warning: %q", got)
	}
	d.get("bob", "/desk/operations/"+op.ID).none("assigned-elsewhere")

	// Unassigning is choosing nobody.
	p = d.get("bob", "/desk/operations/"+op.ID)
	form = inputs(p.one("form-assign"))
	form.Set("assignee", "")
	form.Set("reason", "back to the pool")
	d.post("bob", "/desk/operations/"+op.ID+"/assign", form).want(http.StatusSeeOther)
	if rows := d.get("bob", "/desk/queue?mine=1").all("queue-row"); len(rows) != 0 {
		t.Fatalf("bob's queue has %d after unassigning", len(rows))
	}
}
