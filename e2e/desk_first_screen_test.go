package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// failedWith puts an item on the desk, failed terminally with the error
// code given: each code is an incident of its own.
func (s *server) failedWith(t *testing.T, key, code string) {
	t.Helper()
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": key, "type": "crm.task.create",
		"event_id": strings.Split(key, ":")[0], "content": map[string]any{"title": "Follow up " + code, "owner": "u_9"},
		"claim": map[string]any{"worker": "w-1"}})
	if r.Status != 201 {
		t.Fatalf("register %s: %d %s", key, r.Status, r.Raw)
	}
	r = s.do(t, "POST", "/v1/operations/"+str(r.Body, "id")+"/settle", map[string]any{"lease_token": num(r.Body, "claim", "lease", "token"),
		"outcome": "failed_terminal", "error": map[string]any{"class": "validation", "code": code,
			"message": "the provider refused field " + code + " of the task: " + strings.Repeat("it is not valid there; ", 6)}})
	if r.Status != 200 {
		t.Fatalf("settle %s: %d %s", key, r.Status, r.Raw)
	}
}

// rowsInView counts the rows the selector finds whose whole box is inside
// the first screen (the viewport, unscrolled).
func rowsInView(b *browser, selector string) int {
	b.t.Helper()
	return eval[int](b, `[...document.querySelectorAll(`+jsString(selector)+`)]
		.filter(r => r.checkVisibility() && r.getBoundingClientRect().bottom <= innerHeight).length`)
}

// fullDesk fills the desk the way a bad night does (realisticDesk) and adds
// six incidents more, each of its own error code.
func fullDesk(t *testing.T, s *server) (deep string) {
	t.Helper()
	deep, _ = realisticDesk(t, s)
	for i := range 6 {
		s.failedWith(t, fmt.Sprintf("evt_first_screen_%d:crm_task", i), fmt.Sprintf("field_%d", i))
	}
	return deep
}

// TestDesk_FirstScreenWide: at 1440×900 the queue shows at least 12 rows
// and the incidents at least 6 in the first screen, each incident's Decide
// column whole on the screen — its decision, reason and Preview button
// inside the table's box and the viewport, not cut off or scrolled away.
func TestDesk_FirstScreenWide(t *testing.T) {
	s, idp := deskServer(t)
	fullDesk(t, s)
	b := newBrowser(t, s, idp, 1440, 900)
	b.run("the viewport", chromedp.EmulateViewport(1440, 900))
	b.signIn(idp, lea, "/desk/queue")
	b.run("the queue", chromedp.WaitVisible(sel("queue-table")))
	if n := rowsInView(b, `[data-testid="queue-row"]`); n < 12 {
		t.Errorf("%d queue rows in the first screen at 1440×900, want at least 12", n)
	}
	b.run("the incidents", chromedp.Navigate(s.URL+"/desk/incidents"), chromedp.WaitVisible(sel("incidents-table")))
	if n := eval[int](b, `document.querySelectorAll('[data-testid="incident-row"]').length`); n < 8 {
		t.Fatalf("%d incidents on the page; the test needs 8", n)
	}
	if n := rowsInView(b, `[data-testid="incident-row"]`); n < 6 {
		t.Errorf("%d incidents in the first screen at 1440×900, want at least 6", n)
	}
	cut := eval[[]string](b, `(() => {
		const out = [];
		const root = document.documentElement;
		const wrap = document.querySelector('[data-testid="incidents-table"]').closest('.table-wrap').getBoundingClientRect();
		for (const row of [...document.querySelectorAll('[data-testid="incident-row"]')].slice(0, 6)) {
			for (const e of row.querySelectorAll('td.c-form, [data-testid="bulk-decision"], [data-testid="bulk-reason"], [data-testid="bulk-preview"]')) {
				const r = e.getBoundingClientRect();
				if (!e.checkVisibility() || r.width < 1) out.push(e.tagName + " " + e.dataset.testid + " is not shown");
				else if (r.right > Math.min(wrap.right, root.clientWidth) + 1 || r.left < wrap.left - 1)
					out.push(e.tagName + " " + (e.dataset.testid || e.className) + " runs to " + Math.round(r.right) + " px of " + Math.round(Math.min(wrap.right, root.clientWidth)));
			}
		}
		return out;
	})()`)
	if len(cut) > 0 {
		t.Errorf("the incidents' Decide column at 1440 px is cut off:\n  %s", strings.Join(cut, "\n  "))
	}
	b.clean()
}

// TestDesk_CompactDensity: choosing "compact" sets more queue rows in the
// first screen than the default, at 1440×900 and on a 1024×768 laptop, and
// "comfortable" fewer; the choice is kept (a cookie) and marked pressed.
func TestDesk_CompactDensity(t *testing.T) {
	s, idp := deskServer(t)
	fullDesk(t, s)
	b := newBrowser(t, s, idp, 1440, 900)
	b.signIn(idp, lea, "/desk/queue")
	sizes := [][2]int64{{1440, 900}, {1024, 768}}
	count := func() [2]int {
		var n [2]int
		for i, size := range sizes {
			b.run("the viewport", chromedp.EmulateViewport(size[0], size[1]), chromedp.Navigate(s.URL+"/desk/queue"),
				chromedp.WaitVisible(sel("queue-table")))
			n[i] = rowsInView(b, `[data-testid="queue-row"]`)
		}
		return n
	}
	def := count()
	b.run("choosing compact", chromedp.Click(sel("density-compact")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="density-compact"][aria-pressed="true"]`)))
	compact := count()
	b.run("choosing comfortable", chromedp.Click(sel("density-comfortable")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="density-comfortable"][aria-pressed="true"]`)))
	comfortable := count()
	for i, size := range sizes {
		t.Logf("%d×%d: %d rows default, %d compact, %d comfortable", size[0], size[1], def[i], compact[i], comfortable[i])
		if compact[i] <= def[i] {
			t.Errorf("at %d×%d compact shows %d rows in the first screen, the default %d: not denser", size[0], size[1], compact[i], def[i])
		}
		if comfortable[i] > def[i] {
			t.Errorf("at %d×%d comfortable shows %d rows, more than the default %d", size[0], size[1], comfortable[i], def[i])
		}
	}
	b.clean()
}

// TestDesk_FirstScreenPhone: on a 390×844 phone the queue shows at least 3
// items in the first screen, and an item's Decide is reachable there: the
// link to it is in the first screen and takes the decision into view.
func TestDesk_FirstScreenPhone(t *testing.T) {
	s, idp := deskServer(t)
	deep := fullDesk(t, s)
	b := newBrowser(t, s, idp, 500, 844)
	b.run("a 390 px phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateTouch))
	b.signIn(idp, lea, "/desk/queue")
	b.run("the queue", chromedp.WaitVisible(sel("queue-table")))
	if n := rowsInView(b, `[data-testid="queue-row"]`); n < 3 {
		t.Errorf("%d queue items in the first screen at 390×844, want at least 3", n)
	}
	first := eval[string](b, `document.querySelector('[data-testid="row-link"]').getAttribute('href')`)
	for _, item := range []string{first, "/desk/operations/" + deep} {
		b.run("the item", chromedp.Navigate(s.URL+item), chromedp.WaitVisible(sel("actions")))
		top := eval[float64](b, `(() => { const j = document.querySelector('[data-testid="jump-decide"]');
			return j && j.checkVisibility() ? j.getBoundingClientRect().bottom : 1e6 })()`)
		if top > 844 {
			t.Errorf("%s at 390×844: no link to Decide in the first screen (%.0f px)", item, top)
			continue
		}
		b.run("jumping to Decide", chromedp.Click(sel("jump-decide")))
		b.waitFor("Decide in view", `(() => { const h = document.getElementById('h-actions').getBoundingClientRect();
			return h.top >= 0 && h.bottom <= innerHeight })()`)
		if got := eval[string](b, `location.hash`); got != "#h-actions" {
			t.Errorf("the jump went to %q", got)
		}
	}
	b.clean()
}
