package web

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

func TestDesk_QueueRefreshesItself(t *testing.T) {
	d := newDesk(t)
	d.intoDesk("evt_1:crm_task", true)

	// The results carry their own poller, asking for this filter's results
	// every 15 seconds; desk.js holds it off while rows are selected.
	const self = "/desk/queue?state=unknown_outcome"
	for _, hx := range []bool{false, true} {
		var p answer
		if hx {
			p = d.get("ada", self, "HX-Request", "true").want(http.StatusOK).fragment()
		} else {
			p = d.get("ada", self).want(http.StatusOK)
		}
		poll := p.one("queue-poll")
		if attr(poll, "hx-get") != self || attr(poll, "hx-trigger") != "every 15s" ||
			attr(poll, "hx-target") != "#queue-results" || !hasAttr(poll, "data-poll") || hasAttr(poll, "hx-push-url") {
			t.Fatalf("htmx %v: poller %v", hx, poll.Attr)
		}
		if len(p.all("row-select")) != 1 {
			t.Fatalf("htmx %v: the rows cannot be selected", hx)
		}
	}
	// An empty queue polls too, so a new item shows up by itself.
	d.get("ada", "/desk/queue?state=failed_terminal").want(http.StatusOK).one("queue-poll")
	// The Operations page searches; it does not refresh under the search.
	d.get("ada", "/desk/operations").want(http.StatusOK).none("queue-poll")
}

func TestDesk_NavigationCountsTheDesk(t *testing.T) {
	d := newDesk(t)
	d.intoDesk("evt_1:crm_task", true)
	d.intoDesk("evt_2:crm_task", true)
	d.intoDesk("evt_3:crm_task", false)
	d.register("evt_4:crm_task", "crm.task.create") // not in the desk

	for _, path := range []string{"/desk", "/desk/queue", "/desk/types", "/desk/audit"} {
		p := d.get("vic", path).want(http.StatusOK)
		u, f := p.one("nav-unknown"), p.one("nav-failed")
		if text(u) != "2 unknown" || attr(u, "href") != "/desk/queue?state=unknown_outcome" ||
			text(f) != "1 failed" || attr(f, "href") != "/desk/queue?state=failed_terminal" {
			t.Fatalf("%s: nav counts %q %q", path, text(u), text(f))
		}
	}
	// A fragment has no navigation of its own; the queue's refresh sends
	// the counts to swap over the page's (TestDesk_QueueRefreshBringsNavCounts).
	d.get("ada", "/desk/audit", "HX-Request", "true").want(http.StatusOK).fragment().none("nav-desk-counts")
	if n := d.get("ada", "/desk/queue", "HX-Request", "true").want(http.StatusOK).fragment().one("nav-desk-counts"); attr(n, "hx-swap-oob") != "true" {
		t.Fatal("the queue's refresh sends the counts to be swapped in place")
	}
}

func TestDesk_TypesPageCopy(t *testing.T) {
	d := newDesk(t)
	p := d.get("ada", "/desk/types").want(http.StatusOK)
	var retry string
	for _, n := range p.all("card-field-retry") {
		retry = text(n) // every test card has the same policy
	}
	for _, want := range []string{"at most 3 attempts within 1h",
		"waits a random time up to 1s, a limit that doubles with each retry up to 1m, and never less than the provider's Retry-After",
		"A failure after 3 attempts, or 1h after the first, comes to the desk."} {
		if !strings.Contains(retry, want) {
			t.Fatalf("retry field lacks %q: %q", want, retry)
		}
	}

	once := testCards()["crm.task.create"]
	once.Name, once.Retry = "crm.task.once", domain.RetryPolicy{MaxAttempts: 1, Backoff: time.Second, BackoffMax: time.Second}
	d.ledger.Cards[once.Name] = once
	p = d.get("ada", "/desk/types").want(http.StatusOK)
	var found bool
	for _, n := range p.all("card") {
		if attr(n, "id") != "type-crm.task.once" {
			continue
		}
		found = true
		if s := text(n); !strings.Contains(s, "at most 1 attempt ") || strings.Contains(s, "1 attempts") ||
			!strings.Contains(s, "No automatic retry") {
			t.Fatalf("one-attempt card: %q", s)
		}
	}
	if !found {
		t.Fatal("no card for the one-attempt type")
	}
}
