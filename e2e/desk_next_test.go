package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_NextItemAndBackToTheFilter: an item opened far down a filtered
// queue is decided; "next item" is the next of that filter, and "Back to
// the queue" returns to the filter, scrolled to where the person was.
func TestDesk_NextItemAndBackToTheFilter(t *testing.T) {
	s, idp := deskServer(t)
	for i := range 3 {
		s.intoDesk(t, fmt.Sprintf("evt_unk%d:crm_task", i), true) // outside the filter
	}
	for i := range 30 {
		s.intoDesk(t, fmt.Sprintf("evt_ft%02d:crm_task", i), false)
	}

	b := newBrowser(t, s, idp, 1366, 700)
	b.signIn(idp, ann, "/desk/queue?state=failed_terminal")
	b.waitFor("thirty rows", `document.querySelectorAll('[data-testid="queue-row"]').length === 30 && !document.querySelector('.htmx-request')`)
	ids := eval[[]string](b, `[...document.querySelectorAll('[data-testid="queue-row"]')].map(r => r.dataset.id)`)
	picked, after := ids[24], ids[25]

	b.run("opening the 25th", chromedp.Click(chromedp.CSS(`[data-testid="queue-row"][data-id="`+picked+`"] a[data-row-link]`)),
		chromedp.WaitVisible(sel("form-retry")))
	b.run("retrying", chromedp.SendKeys(sel("reason-retry"), "Owner u_9 recreated in the CRM"),
		chromedp.Click(sel("submit-retry")), chromedp.WaitVisible(sel("decision-recorded")))
	if next := eval[string](b, `document.querySelector('[data-testid="next-item"]').getAttribute("href")`); !strings.HasPrefix(next, "/desk/operations/"+after+"?from=") {
		t.Fatalf("next item %q, want %s of the same filter", next, after)
	}

	b.run("back to the queue", chromedp.Click(sel("back-to-queue")), chromedp.WaitVisible(sel("queue-table")))
	b.waitFor("the queue settled", `document.readyState === "complete" && !document.querySelector('.htmx-request')`)
	if got := eval[string](b, `location.pathname + location.search + location.hash`); got != "/desk/queue?state=failed_terminal#row-"+after {
		t.Fatalf("back at %s", got)
	}
	if got := eval[string](b, `document.querySelector('select[name="state"]').value`); got != "failed_terminal" {
		t.Fatalf("the filter came back as state=%q", got)
	}
	inView := `(() => { const r = document.getElementById("row-` + after + `").getBoundingClientRect();
		return window.scrollY > 0 && r.top >= 0 && r.bottom <= window.innerHeight; })()`
	if !eval[bool](b, inView) {
		t.Fatalf("the queue is not scrolled to the row: scrollY %v", eval[float64](b, `window.scrollY`))
	}
	b.clean()
}
