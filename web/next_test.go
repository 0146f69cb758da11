package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// flashCookie is the flash a decision's 303 left, as a Cookie header.
func flashCookie(a answer) string {
	for _, c := range (&http.Response{Header: a.header}).Cookies() {
		if c.Name == "handoff_flash" {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}

// formOf is the form with the data-testid in the page.
func formOf(p answer, testid string) url.Values { return inputs(p.one(testid)) }

// TestDesk_NextItemKeepsTheFilter: an item opened from a filtered queue
// keeps the filter through the decision and its redirect, so "next item"
// is the next item of that filter, and the way back returns to the filter,
// at the row.
func TestDesk_NextItemKeepsTheFilter(t *testing.T) {
	d := newDesk(t)
	first := d.intoDesk("evt_1:crm_task", false)
	unknown := d.intoDesk("evt_2:crm_task", true) // older than the rest of the filter, outside it
	second := d.intoDesk("evt_3:crm_task", false)
	third := d.intoDesk("evt_4:crm_task", false)
	fourth := d.intoDesk("evt_5:crm_task", false)
	list := "/desk/queue?state=failed_terminal"

	q := d.get("ada", list).want(http.StatusOK)
	var href string
	for _, n := range q.all("queue-row") {
		if attr(n, "data-id") == first.ID {
			if attr(n, "id") != "row-"+first.ID {
				t.Fatalf("the row has no anchor: id %q", attr(n, "id"))
			}
			var walk func(*html.Node)
			walk = func(n *html.Node) {
				if attr(n, "data-testid") == "row-link" {
					href = attr(n, "href")
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(n)
		}
	}
	if want := "/desk/operations/" + first.ID + "?from=" + url.QueryEscape(list); href != want {
		t.Fatalf("the row links to %q, want %q", href, want)
	}

	p := d.get("ada", href).want(http.StatusOK)
	if got := attr(p.one("back-to-list"), "href"); got != list+"#row-"+first.ID {
		t.Fatalf("back to the list: %q", got)
	}
	form := formOf(p, "form-retry")
	if form.Get("from") != list {
		t.Fatalf("the retry form carries from=%q, want %q", form.Get("from"), list)
	}
	form.Set("reason", "owner fixed")
	r := d.post("ada", "/desk/operations/"+first.ID+"/resolve", form).want(http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != href {
		t.Fatalf("the decision redirects to %q, want %q", loc, href)
	}
	done := d.get("ada", r.header.Get("Location"), "Cookie", flashCookie(r)).want(http.StatusOK)
	if got, want := attr(done.one("next-item"), "href"), "/desk/operations/"+second.ID+"?from="+url.QueryEscape(list); got != want {
		t.Fatalf("next item %q, want %q (not %s, outside the filter)", got, want, unknown.ID)
	}
	// The retried item left the list: back is at the row that took its place.
	if got := attr(done.one("back-to-queue"), "href"); got != list+"#row-"+second.ID {
		t.Fatalf("back to the queue: %q", got)
	}

	// A note leaves the item in the list: next is the one after it, back is at it.
	p = d.get("ada", "/desk/operations/"+second.ID+"?from="+url.QueryEscape(list)).want(http.StatusOK)
	note := formOf(p, "form-note")
	note.Set("text", "called the CRM team")
	r = d.post("ada", "/desk/operations/"+second.ID+"/notes", note).want(http.StatusSeeOther)
	done = d.get("ada", r.header.Get("Location"), "Cookie", flashCookie(r)).want(http.StatusOK)
	if got := attr(done.one("next-item"), "href"); !strings.HasPrefix(got, "/desk/operations/"+third.ID+"?from=") {
		t.Fatalf("next item after a note: %q, want %s", got, third.ID)
	}
	if got := attr(done.one("back-to-queue"), "href"); got != list+"#row-"+second.ID {
		t.Fatalf("back after a note: %q", got)
	}

	// Retrying one in the middle: next is the one after it, not the list's
	// first; retrying the last wraps to the first.
	retry := func(id string) answer {
		p := d.get("ada", "/desk/operations/"+id+"?from="+url.QueryEscape(list)).want(http.StatusOK)
		form := formOf(p, "form-retry")
		form.Set("reason", "owner fixed")
		r := d.post("ada", "/desk/operations/"+id+"/resolve", form).want(http.StatusSeeOther)
		return d.get("ada", r.header.Get("Location"), "Cookie", flashCookie(r)).want(http.StatusOK)
	}
	if got := attr(retry(third.ID).one("next-item"), "href"); !strings.HasPrefix(got, "/desk/operations/"+fourth.ID+"?") {
		t.Fatalf("next after the middle item: %q, want %s", got, fourth.ID)
	}
	if got := attr(retry(fourth.ID).one("next-item"), "href"); !strings.HasPrefix(got, "/desk/operations/"+second.ID+"?") {
		t.Fatalf("next after the last item: %q, want the first, %s", got, second.ID)
	}

	// The Operations page is a list too.
	ops := "/desk/operations?q=evt_4"
	p = d.get("ada", "/desk/operations/"+third.ID+"?from="+url.QueryEscape(ops)).want(http.StatusOK)
	if got := attr(p.one("back-to-list"), "href"); got != ops+"#row-"+third.ID {
		t.Fatalf("back to the Operations page: %q", got)
	}

	// from leads only to the desk's lists.
	for _, bad := range []string{"https://evil.example/desk/queue", "//evil.example/desk/queue", "/desk/audit", "/desk/queue/../audit"} {
		p := d.get("ada", "/desk/operations/"+second.ID+"?from="+url.QueryEscape(bad)).want(http.StatusOK)
		p.none("back-to-list")
		if f := formOf(p, "form-retry"); f.Has("from") {
			t.Fatalf("from=%q carried as %q", bad, f.Get("from"))
		}
	}
}
