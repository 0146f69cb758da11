package e2e

import (
	"regexp"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// TestDesk_QueueRefreshSaysWhenAndPauses: the queue says how long ago it
// was read, and a person can pause its refresh: a new item waits until
// they resume it. The refresh updates the navigation's counts too.
func TestDesk_QueueRefreshSaysWhenAndPauses(t *testing.T) {
	s, idp := deskServer(t)
	s.intoDesk(t, "evt_refresh1:crm_task", true)
	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/queue")
	b.run("the queue", chromedp.WaitVisible(sel("queue-pause")))
	if got := b.text(sel("queue-updated")); !regexp.MustCompile(`Updated \d+ s ago; the list refreshes every 15 s\.`).MatchString(got) {
		t.Fatalf("the refresh line says %q", got)
	}
	poll := func() {
		eval[bool](b, `window.__polled = false; (function () { var p = document.querySelector('[data-poll]');
			htmx.ajax("GET", p.getAttribute("hx-get"), {source: p, target: "#queue-results"}).then(function () { window.__polled = true; }); return true; })()`)
		b.waitFor("the poll", `window.__polled === true && !document.querySelector('.htmx-request')`)
	}
	rows := `document.querySelectorAll('[data-testid="queue-row"]').length`
	b.run("pausing", chromedp.Click(sel("queue-pause")),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 5, 5), chromedp.Blur(sel("queue-pause")))
	if got := eval[string](b, `document.querySelector('[data-testid="queue-pause"]').getAttribute("aria-pressed")`); got != "true" {
		t.Fatalf("after pausing, aria-pressed is %s", got)
	}
	s.intoDesk(t, "evt_refresh2:crm_task", true)
	poll()
	if n := eval[int](b, rows); n != 1 {
		t.Fatalf("a paused queue refreshed: %d rows", n)
	}
	b.run("resuming", chromedp.Click(sel("queue-pause")),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 5, 5), chromedp.Blur(sel("queue-pause")))
	poll()
	if n := eval[int](b, rows); n != 2 {
		t.Fatalf("after resuming, the queue shows %d rows", n)
	}
	if got := b.text(sel("queue-pause")); got != "Pause refresh" {
		t.Fatalf("after the refresh the button says %q", got)
	}
	// The refresh brought the navigation's counts along, in their place.
	if got := eval[string](b, `[...document.querySelectorAll('#nav-desk-counts')].map(e => e.closest("nav") ? e.innerText : "outside").join("|")`); got != "2 unknown 0 failed" {
		t.Fatalf("after the refresh the navigation's counts read %q", got)
	}
	b.clean()
}
