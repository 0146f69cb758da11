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

// current is the navigation entry marked as the current page, "" for none.
func current(p answer) string {
	var out string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" && attr(n, "aria-current") == "page" {
			out = text(n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	return out
}

// The navigation marks Incidents on the incidents' pages, and on an item
// the list it was opened from — none when it was opened directly.
func TestDesk_NavMarksThePagesList(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	item := "/desk/operations/" + op.ID
	for target, want := range map[string]string{
		"/desk/incidents":                   "Incidents",
		"/desk/incidents/" + d.incidentOf(): "Incidents",
		"/desk/queue":                       "Queue",
		item:                                "",
		item + "?from=" + url.QueryEscape("/desk/queue?state=unknown_outcome"): "Queue",
		item + "?from=" + url.QueryEscape("/desk/operations?q=evt_1"):          "Operations",
	} {
		if got := current(d.get("ada", target).want(http.StatusOK)); got != want {
			t.Errorf("%s marks %q, want %q", target, got, want)
		}
	}
}

// An error code with a bidi control is shown escaped in the incident
// page's title, as on the page.
func TestDesk_TitleEscapesBidi(t *testing.T) {
	d := newDesk(t)
	ctx := context.Background()
	op := d.register("evt_1:crm_task", "crm.task.create")
	cl, err := d.ledger.Workflow.Claim(ctx, testWorkflow, op.ID, domain.Claim{Worker: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ledger.Workflow.Settle(ctx, testWorkflow, op.ID, domain.Settle{LeaseToken: cl.Lease.Token, Outcome: domain.OutcomeFailedTerminal,
		Error: &domain.ErrorInfo{Class: domain.ClassValidation, Code: "E\u202e42", Message: "refused"}}); err != nil {
		t.Fatal(err)
	}
	p := d.get("ada", "/desk/incidents/"+d.incidentOf()).want(http.StatusOK)
	title := p.body[strings.Index(p.body, "<title>"):strings.Index(p.body, "</title>")]
	if strings.ContainsRune(title, '\u202e') || !strings.Contains(title, "E") {
		t.Fatalf("title %q", title)
	}
}

// Resolving an incident whose items are still open says so and needs a
// confirmation; without it nothing changes.
func TestDesk_ResolveWithOpenItemsAsks(t *testing.T) {
	d := newDesk(t)
	d.intoDesk("evt_1:crm_task", true)
	d.intoDesk("evt_2:crm_task", true)
	path := "/desk/incidents/" + d.incidentOf()
	p := d.get("ada", path).want(http.StatusOK)
	if got := p.text("resolve-open-warning"); !strings.HasPrefix(got, "2 items are still open") {
		t.Fatalf("warning: %q", got)
	}
	form := inputs(p.one("form-resolve"))
	form.Del("confirm_open")
	form.Set("text", "the provider recovered")
	refused := d.post("ada", path+"/resolve", form).want(http.StatusUnprocessableEntity)
	if !strings.Contains(refused.body, "2 items are still open") || d.get("ada", "/desk/incidents").all("incident-row")[0] == nil {
		t.Fatalf("refusal: %s", refused.body)
	}
	if got := attr(d.get("ada", "/desk/incidents").all("incident-row")[0], "data-status"); got != "open" {
		t.Fatalf("the unconfirmed resolve changed the incident: %s", got)
	}
	form.Set("confirm_open", "1")
	d.post("ada", path+"/resolve", form).want(http.StatusSeeOther)
	if got := attr(d.get("ada", "/desk/incidents").all("incident-row")[0], "data-status"); got != "resolved" {
		t.Fatalf("the confirmed resolve: %s", got)
	}
}
