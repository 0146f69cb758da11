package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/opshandoff/handoff/domain"
)

// times are the page's <time> elements.
func (p answer) times() []*html.Node {
	var out []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "time" {
			out = append(out, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	return out
}

// cookie is the value the answer sets for the cookie; "" when none.
func (p answer) cookie(name string) string {
	for _, c := range (&http.Response{Header: p.header}).Cookies() {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

func TestDesk_TimesNameTheirZone(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)

	// Without a choice every time reads in UTC and says so, on the pages
	// that show times, and the layout offers the choice with UTC pressed.
	for _, path := range []string{"/desk", "/desk/audit", "/desk/operations/" + op.ID} {
		p := d.get("ada", path).want(http.StatusOK)
		ts := p.times()
		if len(ts) == 0 {
			t.Fatalf("%s shows no times", path)
		}
		for _, el := range ts {
			if !strings.HasSuffix(text(el), " UTC") || attr(el, "data-time") != "utc" || !strings.HasSuffix(attr(el, "title"), " UTC") {
				t.Fatalf("%s: a time without its zone: %q %v", path, text(el), el.Attr)
			}
		}
		if attr(p.one("time-utc"), "aria-pressed") != "true" || attr(p.one("time-local"), "aria-pressed") != "false" {
			t.Fatalf("%s: UTC is not the chosen default", path)
		}
		if ret := inputs(p.one("time-choice")).Get("return"); ret != path {
			t.Fatalf("%s: the choice returns to %q", path, ret)
		}
	}
}

func TestDesk_TimeChoiceKeptInACookie(t *testing.T) {
	d := newDesk(t)
	d.intoDesk("evt_1:crm_task", true)

	r := d.post("ada", "/desk/time", url.Values{"time": {"relative"}, "return": {"/desk/audit?action=settle"}}).want(http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/desk/audit?action=settle" {
		t.Fatalf("back to the page: %q", loc)
	}
	if v := r.cookie(timeCookie); v != "relative" {
		t.Fatalf("cookie %q, want relative", v)
	}
	p := d.get("ada", "/desk/audit", "Cookie", timeCookie+"=relative").want(http.StatusOK)
	for _, el := range p.times() {
		s := text(el)
		if (!strings.HasSuffix(s, " ago") && s != "just now") || !strings.HasSuffix(attr(el, "title"), " UTC") {
			t.Fatalf("relative time %q, title %q", s, attr(el, "title"))
		}
	}
	if attr(p.one("time-relative"), "aria-pressed") != "true" || attr(p.one("time-utc"), "aria-pressed") != "false" {
		t.Fatal("the chosen mode is not shown as chosen")
	}

	// Local: the page says UTC until desk.js rewrites the marked times in
	// the browser's zone.
	p = d.get("ada", "/desk/audit", "Cookie", timeCookie+"=local").want(http.StatusOK)
	if html := p.doc.FirstChild.NextSibling; html == nil || attr(html, "data-time") != "local" {
		t.Fatal("the page does not say times are local")
	}
	for _, el := range p.times() {
		if attr(el, "data-time") != "local" || !strings.HasSuffix(text(el), " UTC") {
			t.Fatalf("local time before the script: %q %v", text(el), el.Attr)
		}
	}

	// A choice that is none, or a return to elsewhere, changes nothing.
	bad := d.post("ada", "/desk/time", url.Values{"time": {"mars"}})
	if bad.status != http.StatusUnprocessableEntity || bad.cookie(timeCookie) != "" {
		t.Fatalf("bad choice: %d, cookie %q", bad.status, bad.cookie(timeCookie))
	}
	r = d.post("ada", "/desk/time", url.Values{"time": {"utc"}, "return": {"https://evil.example/"}}).want(http.StatusSeeOther)
	if r.header.Get("Location") != "/desk" {
		t.Fatalf("return elsewhere: %q", r.header.Get("Location"))
	}
	// An unreadable cookie reads as UTC.
	p = d.get("ada", "/desk/audit", "Cookie", timeCookie+"=mars").want(http.StatusOK)
	for _, el := range p.times() {
		if !strings.HasSuffix(text(el), " UTC") {
			t.Fatalf("unknown mode: %q", text(el))
		}
	}
}

func TestDesk_QueueAgeCountsFromDeskEntry(t *testing.T) {
	d := newDesk(t)
	// Created three days ago, in the desk only now.
	d.ledger.Now = func() time.Time { return time.Now().Add(-72 * time.Hour) }
	op := d.register("evt_1:crm_task", "crm.task.create")
	d.ledger.Now = time.Now
	if time.Since(op.CreatedAt) < 71*time.Hour {
		t.Fatalf("created %v", op.CreatedAt)
	}
	d.settleUnknown(op.ID)

	p := d.get("ada", "/desk/queue").want(http.StatusOK)
	age := p.one("row-age")
	if s := text(age); strings.Contains(s, " d ") || strings.Contains(s, " h ") {
		t.Fatalf("age %q counts from creation", s)
	}
	if !strings.HasPrefix(attr(age, "title"), "in the desk since ") {
		t.Fatalf("age title %q", attr(age, "title"))
	}
	// "Older than" filters on desk entry too.
	if n := len(d.get("ada", "/desk/queue?age=1h").want(http.StatusOK).all("queue-row")); n != 0 {
		t.Fatalf("older than 1h: %d rows", n)
	}
	if n := len(d.get("ada", "/desk/queue?age=").want(http.StatusOK).all("queue-row")); n != 1 {
		t.Fatalf("any age: %d rows", n)
	}
	// And so do the overview's age bands and its oldest item.
	o := d.get("ada", "/desk").want(http.StatusOK)
	if s := o.text("overview-ages"); !strings.Contains(s, "under 1 h 1") || !strings.Contains(s, "1–7 days 0") {
		t.Fatalf("age bands: %q", s)
	}
	if s := o.text("overview-oldest"); strings.Contains(s, "waiting 3 d") {
		t.Fatalf("oldest: %q", s)
	}
}

// settleUnknown drives a registered operation into unknown_outcome.
func (d *desk) settleUnknown(id string) {
	d.t.Helper()
	ctx := context.Background()
	cl, err := d.ledger.Workflow.Claim(ctx, testWorkflow, id, domain.Claim{Worker: "w1"})
	if err != nil {
		d.t.Fatal(err)
	}
	tok := cl.Lease.Token
	if _, err := d.ledger.Workflow.Begin(ctx, testWorkflow, id, domain.Begin{LeaseToken: tok}); err != nil {
		d.t.Fatal(err)
	}
	_, err = d.ledger.Workflow.Settle(ctx, testWorkflow, id, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}})
	if err != nil {
		d.t.Fatal(err)
	}
}
