package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestDesk_Queue(t *testing.T) {
	d := newDesk(t)
	a := d.intoDesk("evt_1:crm_task", true)
	b := d.intoDesk("evt_2:crm_task", false)
	d.register("evt_3:crm_task", "crm.task.create") // not in the desk

	p := d.get("ada", "/desk/queue").want(http.StatusOK)
	rows := p.all("queue-row")
	if len(rows) != 2 || attr(rows[0], "data-id") != a.ID || attr(rows[1], "data-id") != b.ID {
		t.Fatalf("queue, oldest first: %d rows", len(rows))
	}
	first := text(rows[0])
	for _, want := range []string{"evt_1:crm_task", "crm.task.create", "acme-crm", "campaigns", "evt_1",
		"unknown outcome", "confirm whether it was executed", "timeout · read timeout"} {
		if !strings.Contains(first, want) {
			t.Fatalf("row lacks %q: %q", want, first)
		}
	}
	if !strings.Contains(text(rows[1]), "Fix the cause, then retry or cancel") {
		t.Fatalf("failed_terminal's next decision: %q", text(rows[1]))
	}
	search := p.one("queue-search")
	if attr(search, "data-search") != "" || attr(search, "name") != "q" {
		t.Fatalf("search input: %v", search.Attr)
	}
	form := p.one("queue-filter")
	// No "change": leaving the search for a row would search again, and
	// that answer's pushState cancels the click's navigation.
	if attr(form, "hx-trigger") != "input changed delay:300ms, submit" || attr(form, "hx-push-url") != "true" ||
		attr(form, "method") != "get" || attr(form, "action") != "/desk/queue" {
		t.Fatalf("filter form: %v", form.Attr)
	}

	// Live search by the provider key, as htmx asks: the results alone.
	f := d.get("ada", "/desk/queue?q="+url.QueryEscape(strings.ToUpper(a.ProviderKey)), "HX-Request", "true").want(http.StatusOK).fragment()
	if rows := f.all("queue-row"); len(rows) != 1 || attr(rows[0], "data-id") != a.ID {
		t.Fatalf("search by provider key: %d rows", len(rows))
	}
	// The same URL without htmx is the whole page, filter filled in.
	p = d.get("ada", "/desk/queue?q=zzz+nothing").want(http.StatusOK)
	p.one("queue-empty")
	if attr(p.one("queue-search"), "value") != "zzz nothing" {
		t.Fatal("the search is not kept in the form")
	}
	for query, want := range map[string]int{"state=failed_terminal": 1, "state=unknown_outcome": 1, "type=coupon.issue": 0,
		"provider=acme-crm": 2, "provider=shop-billing": 0, "namespace=campaigns": 2, "namespace=other": 0,
		"age=1h": 0, "age=": 2, "q=owner+u_9": 1, "mine=1": 0, "assignee=bob@example.com": 0} {
		if n := len(d.get("ada", "/desk/queue?"+query).want(http.StatusOK).all("queue-row")); n != want {
			t.Errorf("%s: %d rows, want %d", query, n, want)
		}
	}
	p = d.get("ada", "/desk/queue?state=received").want(http.StatusOK)
	if !strings.Contains(p.text("queue-problem"), "state: must be unknown_outcome or failed_terminal") {
		t.Fatalf("bad state: %q", p.text("queue-problem"))
	}
}

func TestDesk_QueueTakeAndAssign(t *testing.T) {
	d := newDesk(t)
	a := d.intoDesk("evt_1:crm_task", true)
	p := d.get("ada", "/desk/queue?state=unknown_outcome").want(http.StatusOK)
	take := p.one("row-take")
	if take == nil {
		t.Fatal("no take button")
	}
	form := url.Values{"take": {"1"}, "expected_version": {strconv.FormatInt(a.Version, 10)}, "return": {"/desk/queue?state=unknown_outcome"}}
	r := d.post("ada", "/desk/operations/"+a.ID+"/assign", form).want(http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/desk/queue?state=unknown_outcome" {
		t.Fatalf("back to the filtered queue: %q", loc)
	}
	p = d.get("ada", "/desk/queue?mine=1").want(http.StatusOK)
	if rows := p.all("queue-row"); len(rows) != 1 || !strings.Contains(p.text("row-assignee"), "ada@example.com") {
		t.Fatalf("mine: %d rows", len(rows))
	}
	p.none("row-take") // already mine
	if n := len(d.get("bob", "/desk/queue?mine=1").all("queue-row")); n != 0 {
		t.Fatalf("bob's queue has %d", n)
	}
	// Taking again with the old version is refused: someone took it. Back
	// on the queue, it says who.
	r = d.post("bob", "/desk/operations/"+a.ID+"/assign", form).refused(http.StatusConflict)
	if got := r.text("stale-take"); !strings.Contains(got, "changed before you took it, so nothing was recorded") ||
		!strings.Contains(got, "Ada Lovelace <ada@example.com> took it") {
		t.Fatalf("stale take: %q", got)
	}
	if loc := r.header.Get("Location"); loc != "" {
		t.Fatalf("the queue redirected again: %q", loc)
	}
	// Assigning to someone else needs a reason; a foreign return is ignored.
	assign := url.Values{"assignee": {"bob@example.com"}, "expected_version": {strconv.FormatInt(a.Version+1, 10)}, "return": {"https://evil.example/"}}
	r = d.post("ada", "/desk/operations/"+a.ID+"/assign", assign).refused(http.StatusUnprocessableEntity)
	if !strings.Contains(r.text("problem"), "reason") {
		t.Fatalf("missing reason: %q", r.text("problem"))
	}
	assign.Set("reason", "Bob knows the CRM")
	// Only someone who signed in can be assigned; a typed email in another
	// case is the person, spelt as their own "Mine" matches it.
	r = d.post("ada", "/desk/operations/"+a.ID+"/assign", assign).refused(http.StatusUnprocessableEntity)
	if !strings.Contains(r.text("problem"), "bob@example.com has never signed in to Handoff") {
		t.Fatalf("unknown assignee: %q", r.text("problem"))
	}
	d.signedIn("bob")
	assign.Set("assignee", "Bob@Example.COM")
	r = d.post("ada", "/desk/operations/"+a.ID+"/assign", assign).want(http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/desk/operations/"+a.ID {
		t.Fatalf("redirect: %q", loc)
	}
	if n := len(d.get("bob", "/desk/queue?mine=1").all("queue-row")); n != 1 {
		t.Fatalf("bob's queue has %d", n)
	}
	// A viewer sees the queue but gets no buttons.
	d.get("vic", "/desk/queue").want(http.StatusOK).none("row-take")
}

func TestDesk_QueuePages(t *testing.T) {
	d := newDesk(t)
	for i := range queuePageSize + 3 {
		d.intoDesk(fmt.Sprintf("evt_%03d:crm_task", i), i%2 == 0)
	}
	p := d.get("ada", "/desk/queue?provider=acme-crm").want(http.StatusOK)
	next := attr(p.one("next-page"), "href")
	if len(p.all("queue-row")) != queuePageSize || !strings.Contains(next, "provider=acme-crm") || !strings.Contains(next, "cursor=") {
		t.Fatalf("page 1: %d rows, next %q", len(p.all("queue-row")), next)
	}
	f := d.get("ada", next, "HX-Request", "true").want(http.StatusOK).fragment()
	rows := f.all("queue-row")
	if len(rows) != 3 || !strings.Contains(text(rows[2]), fmt.Sprintf("evt_%03d", queuePageSize+2)) {
		t.Fatalf("page 2: %d rows", len(rows))
	}
	f.none("next-page")
	if p := d.get("ada", "/desk/queue?cursor=garbage").want(http.StatusOK); !strings.Contains(p.text("queue-problem"), "cursor") {
		t.Fatal("a bad cursor is not explained")
	}
}
