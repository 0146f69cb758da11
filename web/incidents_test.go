package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/opshandoff/handoff/domain"
)

// incidentOf is the ID of the only incident on the list.
func (d *desk) incidentOf() string {
	d.t.Helper()
	rows := d.get("ada", "/desk/incidents").want(http.StatusOK).all("incident-row")
	if len(rows) != 1 {
		d.t.Fatalf("%d incidents, want 1", len(rows))
	}
	return attr(rows[0], "data-id")
}

// TestDesk_IncidentTriage: an incident of two unknown outcomes is
// acknowledged, given an owner chosen from the people, noted, and its open
// items decided through its own bulk form, which offers only decisions for
// unknown outcomes; deciding them resolves it. A viewer reads it and is
// refused every form; a stale form is refused and keeps what was typed.
func TestDesk_IncidentTriage(t *testing.T) {
	d := newDesk(t)
	d.signedIn("ada", "bob")
	a, b := d.intoDesk("evt_t1:a", true), d.intoDesk("evt_t2:a", true)
	id := d.incidentOf()
	path := "/desk/incidents/" + id

	vic := d.get("vic", path).want(http.StatusOK)
	vic.none("triage")
	vic.none("bulk-incident-items")
	if got := vic.text("incident-counts"); got != "2 open, 2 ever" {
		t.Fatalf("counts: %q", got)
	}
	d.post("vic", path+"/acknowledge", url.Values{}).want(http.StatusForbidden)

	p := d.get("ada", path).want(http.StatusOK)
	// Only decisions for unknown outcomes, none preselected, the safest first.
	var options []string
	for _, o := range p.all("bulk-decision") {
		for c := o.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.Data == "option" {
				if hasAttr(c, "selected") && attr(c, "value") != "" {
					t.Fatalf("the bulk form preselects %q", attr(c, "value"))
				}
				if v := attr(c, "value"); v != "" {
					options = append(options, v)
				}
			}
		}
	}
	if len(options) == 0 || options[0] != "not_executed_cancel" || strings.Contains(" "+strings.Join(options, " ")+" ", " retry ") || strings.Contains(" "+strings.Join(options, " ")+" ", " cancel ") {
		t.Fatalf("the bulk form offers %v for unknown outcomes", options)
	}
	stale := inputs(p.one("form-notes"))

	ack := inputs(p.one("form-acknowledge"))
	if loc := d.post("ada", path+"/acknowledge", ack).want(http.StatusSeeOther).header.Get("Location"); loc != path+"?done=acknowledge" {
		t.Fatalf("acknowledge redirects to %q", loc)
	}
	p = d.get("ada", path+"?done=acknowledge").want(http.StatusOK)
	if got := p.text("incident-ack"); !strings.Contains(got, "acknowledged by ada@example.com") || p.text("incident-done") != "Acknowledged." {
		t.Fatalf("acknowledged: %q", got)
	}
	p.none("triage-acknowledge")

	stale.Set("text", "typed on an old page")
	r := d.post("ada", path+"/notes", stale).want(http.StatusConflict)
	if !strings.Contains(r.text("problem"), "changed since") || !strings.Contains(r.body, "typed on an old page") {
		t.Fatalf("a stale note: %q", r.text("problem"))
	}

	own := inputs(p.one("form-owner"))
	own.Set("owner", personValue(testPeople["bob"].Person()))
	d.post("ada", path+"/owner", own).want(http.StatusSeeOther)
	p = d.get("ada", path).want(http.StatusOK)
	if got := p.text("incident-owner"); got != "bob@example.com" {
		t.Fatalf("owner: %q", got)
	}
	note := inputs(p.one("form-notes"))
	note.Set("text", "CRM status page: degraded")
	d.post("ada", path+"/notes", note).want(http.StatusSeeOther)

	p = d.get("ada", path).want(http.StatusOK)
	form := inputs(p.one("bulk-incident-items"))
	if len(form["item"]) != 2 || form.Get("return") != path {
		t.Fatalf("the bulk form: %v", form)
	}
	form.Set("decision", "not_executed_cancel")
	form.Set("reason", "the CRM never got them")
	pre := d.post("ada", "/desk/batch/preview", form).want(http.StatusOK)
	if got := pre.text("batch-summary"); !strings.HasPrefix(got, "2 items will be decided, 0 skipped") {
		t.Fatalf("preview: %q", got)
	}
	if back := inputs(pre.one("batch-apply-form")).Get("return"); back != path {
		t.Fatalf("the preview goes back to %q, want the incident", back)
	}
	if got := d.applyBatch("ada", inputs(pre.one("batch-apply-form"))).text("batch-counts"); got != "2 applied, 0 skipped, 0 failed." {
		t.Fatalf("apply: %q", got)
	}
	for _, op := range []domain.Operation{a, b} {
		if st := d.state(op.ID).State; st != domain.Cancelled {
			t.Fatalf("%s is %s", op.Key, st)
		}
	}
	p = d.get("vic", path).want(http.StatusOK)
	if got := attr(p.one("incident-status"), "data-status"); got != "resolved" || !strings.Contains(p.text("incident-status-by"), "all items decided") {
		t.Fatalf("after deciding every item: %q %q", got, p.text("incident-status-by"))
	}
	var lines []string
	for _, n := range p.all("incident-event") {
		lines = append(lines, text(n))
	}
	all := strings.Join(lines, "\n")
	for _, want := range []string{"Handoff opened it", "ada@example.com acknowledged it", "ada@example.com set the owner to bob@example.com",
		"CRM status page: degraded", "Handoff resolved it"} {
		if !strings.Contains(all, want) {
			t.Fatalf("the timeline lacks %q:\n%s", want, all)
		}
	}
	if _, err := d.ledger.Incidents.TriageIncident(context.Background(), testPeople["ada"], id, domain.Triage{Kind: domain.TriageAcknowledge}); domain.ErrorCode(err) != domain.EInvalidTransition {
		t.Fatalf("acknowledging a resolved incident: %v", err)
	}
	reopen := inputs(d.get("ada", path).want(http.StatusOK).one("form-reopen"))
	d.post("ada", path+"/reopen", reopen).want(http.StatusUnprocessableEntity) // the reason is required
	reopen.Set("text", "it came back")
	d.post("ada", path+"/reopen", reopen).want(http.StatusSeeOther)
	d.get("ada", "/desk/incidents/inc_nope").want(http.StatusNotFound)
}

// TestDesk_IncidentHidesContent: the incident's page lists keys, states and
// errors — never the content a card keeps from the reader.
func TestDesk_IncidentHidesContent(t *testing.T) {
	cards := testCards()
	crm := cards["crm.task.create"]
	crm.ContentVisibleTo = domain.RoleApprover
	cards[crm.Name] = crm
	d := newDeskWith(t, cards)
	d.intoDesk("evt_h1:a", true)
	id := d.incidentOf()
	for _, who := range []string{"vic", "ada"} {
		p := d.get(who, "/desk/incidents/"+id).want(http.StatusOK)
		if len(p.all("incident-item")) != 1 || strings.Contains(p.body, "Follow up") || strings.Contains(p.body, `"title"`) {
			t.Fatalf("%s: the incident page shows content", who)
		}
	}
	if p := d.get("vic", "/desk/incidents").want(http.StatusOK); strings.Contains(p.body, "Follow up") {
		t.Fatal("the incidents list shows content")
	}
}
