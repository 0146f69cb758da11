package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDesk_AssignFollowsThePerson: an item assigned from the list belongs
// to the person, (issuer, subject), not to an email. Ada's "Mine" lists it
// after her email changed, and she is not warned that someone else has it;
// someone else signing in with Ada's old email at another provider sees
// none of it as theirs and is warned. Typing an email two people share is
// refused: the list names the person.
func TestDesk_AssignFollowsThePerson(t *testing.T) {
	d := newDesk(t)
	d.signedIn("ada", "bob", "ada3")
	op := d.intoDesk("evt_person:crm_task", false)

	form := inputs(d.get("bob", "/desk/operations/"+op.ID).one("form-assign"))
	form.Set("assignee", "ADA@example.com")
	form.Set("reason", "Ada knows the CRM")
	r := d.post("bob", "/desk/operations/"+op.ID+"/assign", form).refused(http.StatusUnprocessableEntity)
	if !strings.Contains(r.text("problem"), "names 2 people") {
		t.Fatalf("an email two people share: %q", r.text("problem"))
	}
	form.Set("assignee", url.Values{"iss": {""}, "sub": {"ada"}}.Encode())
	d.post("bob", "/desk/operations/"+op.ID+"/assign", form).want(http.StatusSeeOther)

	for who, want := range map[string]int{"ada": 1, "ada2": 1, "ada3": 0, "bob": 0} {
		if rows := d.get(who, "/desk/queue?mine=1").all("queue-row"); len(rows) != want {
			t.Errorf("%s's Mine lists %d, want %d", who, len(rows), want)
		}
	}
	for who, warned := range map[string]bool{"ada": false, "ada2": false, "ada3": true, "bob": true} {
		p := d.get(who, "/desk/operations/"+op.ID).want(http.StatusOK)
		if got := len(p.all("assigned-elsewhere")) == 1; got != warned {
			t.Errorf("%s warned %v, want %v", who, got, warned)
		}
	}
	// Ada with her new email takes nothing from herself: the queue offers
	// her no Take on it.
	if takes := d.get("ada2", "/desk/queue").all("row-take"); len(takes) != 0 {
		t.Errorf("ada2 is offered %d takes of her own item", len(takes))
	}
	// The other Ada takes it: hers now, by her issuer and subject.
	take := inputs(d.get("ada3", "/desk/queue").one("row-take").Parent)
	d.post("ada3", "/desk/operations/"+op.ID+"/assign", take).want(http.StatusSeeOther)
	if got := d.state(op.ID); got.AssigneeIssuer != "https://other.example.com" || got.AssigneeSubject != "ada" {
		t.Fatalf("taken by %q %q %q", got.Assignee, got.AssigneeIssuer, got.AssigneeSubject)
	}
	if rows := d.get("ada", "/desk/queue?mine=1").all("queue-row"); len(rows) != 0 {
		t.Errorf("Ada's Mine still lists the item the other Ada took")
	}
}
