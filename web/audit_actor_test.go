package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// TestDesk_AuditActorAsMeant: the audit page's Actor filter finds a person
// by any case of their email and by a part of their name; a part of
// several people's names says so instead of silently showing nothing.
func TestDesk_AuditActorAsMeant(t *testing.T) {
	d := newDesk(t)
	d.signedIn("ada", "bob")
	op := d.intoDesk("evt_actor:crm_task", true)
	d.post("ada", "/desk/operations/"+op.ID+"/notes", url.Values{"text": {"calling the CRM"}}).want(http.StatusSeeOther)

	for _, typed := range []string{"ada@example.com", "ADA@Example.com", "lovelace"} {
		p := d.get("vic", "/desk/audit?actor="+url.QueryEscape(typed)).want(http.StatusOK)
		var notes int
		for _, r := range p.all("audit-row") {
			if strings.Contains(text(r), "calling the CRM") {
				notes++
			}
		}
		if notes != 1 {
			t.Errorf("actor %q: %d of Ada's notes", typed, notes)
		}
		if typed != "ada@example.com" && !strings.Contains(p.text("audit-actor-note"), "Ada Lovelace <ada@example.com>") {
			t.Errorf("actor %q: the page does not say whom it shows", typed)
		}
	}
	p := d.get("vic", "/desk/audit?actor=example.com").want(http.StatusOK)
	if note := p.text("audit-actor-note"); !strings.Contains(note, "2 people") || !strings.Contains(note, "bob@example.com") {
		t.Errorf("a part of two people's names: %q", note)
	}
}

// TestDesk_AuditPeopleOnly: "People only" leaves out the workflows' and
// the system's events, and the next page and the export keep it.
func TestDesk_AuditPeopleOnly(t *testing.T) {
	d := newDesk(t)
	d.signedIn("ada")
	op := d.intoDesk("evt_people:crm_task", true)
	for i := range 55 {
		d.post("ada", "/desk/operations/"+op.ID+"/notes", url.Values{"text": {"note " + strconv.Itoa(i)}}).want(http.StatusSeeOther)
	}
	p := d.get("aud", "/desk/audit?people=1").want(http.StatusOK)
	if !hasAttr(p.one("audit-people"), "checked") {
		t.Fatal("the filter does not show People only as chosen")
	}
	next := attr(p.one("next-page"), "href")
	rows := append(p.all("audit-row"), d.get("aud", next).want(http.StatusOK).all("audit-row")...)
	if len(rows) != 56 || !strings.Contains(next, "people=1") {
		t.Fatalf("%d events by people (want Ada's sign-in and 55 notes), next %q", len(rows), next)
	}
	for _, r := range rows {
		if a := attr(r, "data-action"); a != "noted" && a != "signed_in" {
			t.Fatalf("People only lists %q: %s", attr(r, "data-action"), text(r))
		}
	}
	if csv := attr(p.one("audit-export-csv"), "href"); !strings.Contains(csv, "people=1") {
		t.Fatalf("the export drops People only: %q", csv)
	}
}
