package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// axeSource is axe-core, vendored for the tests only (testdata/axe).
func axeSource(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile("testdata/axe/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// axeCheck runs axe-core on the page and fails the test for every
// violation, whatever its impact: a moderate one (content outside a
// landmark, an empty table header) is still one a person meets. The
// development sign-in's banner is left out: it is no page of a real desk.
func (b *browser) axeCheck(where, src string) {
	b.t.Helper()
	if !eval[bool](b, `typeof window.axe === "object"`) {
		b.run("loading axe-core", chromedp.Evaluate[chromedp.Void](src+";undefined"))
	}
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]string](`axe.run({exclude: [['[data-testid="dev-banner"]']]}, {resultTypes: ["violations"]}).then(r =>
		r.violations.map(v => v.impact + " " + v.id + ": " + v.help + " — " + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join("; ")))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("axe on %s: %v", where, err)
	}
	if len(got) > 0 {
		b.t.Errorf("%s has accessibility violations:\n  %s", where, strings.Join(got, "\n  "))
	}
}

// TestDesk_Accessibility: every page of the desk, at desktop and phone
// width, in the light theme and the dark (the system's preference
// emulated), with no axe-core violation: every page of the
// navigation as an admin sees it (Overview, Queue, Operations, Approvals,
// Audit, Types, Notifications), the incidents, operations with content and
// a diff, a bulk preview and a batch's result, and the signed-out page.
func TestDesk_Accessibility(t *testing.T) {
	s, idp := deskServer(t)
	src := axeSource(t)
	deep := s.intoDeskWith(t, "evt_a11y1:crm_task", deepContent(4))
	s.intoDesk(t, "evt_a11y2:crm_task", false)
	coupon := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_a11y3:coupon", "type": "coupon.issue",
		"event_id": "evt_a11y3", "content": map[string]any{"customer": "c_7", "percent": 50, "valid_days": 30}})
	if r := s.call(t, idp.IDToken(t, ann), "POST", "/v1/operations/"+str(coupon.Body, "id")+"/revisions",
		map[string]any{"content": map[string]any{"customer": "c_7", "percent": 15, "valid_days": 30}, "reason": "typo",
			"expected_version": num(coupon.Body, "version")}); r.Status != 200 {
		t.Fatalf("revise: %d %s", r.Status, r.Raw)
	}

	// A drilled type: the Types page then shows its last drill and receipt
	// (the receipt itself is a JSON document, not a page).
	s.drillReceipt(t, "crm.task.create")
	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, adm, "/desk")
	incident := b.firstIncident()
	pages := []struct{ path, ready string }{
		{"/desk", "main h1"},
		{"/desk/queue", `[data-testid="queue-table"]`},
		{"/desk/incidents", `[data-testid="incidents-table"]`},
		{incident, `[data-testid="incident-timeline"]`},
		{"/desk/operations", `[data-testid="queue-table"]`},
		{"/desk/operations/" + deep, `[data-testid="timeline"]`},
		{"/desk/operations/" + str(coupon.Body, "id"), `[data-testid="timeline"]`},
		{"/desk/approvals", `[data-testid="approval-item"]`},
		{"/desk/audit", "main h1"},
		{"/desk/types", `a[title^="sha256 "]`}, // with the last drill and its receipt
		{"/desk/notifications", "main h1"},
	}
	for _, scheme := range []string{"light", "dark"} {
		b.run("the "+scheme+" theme", colorScheme(scheme)) // desk_theme_test.go
		for _, width := range []int64{1366, 390} {
			b.run("the viewport", chromedp.EmulateViewport(width, 900))
			for _, p := range pages {
				b.run("opening "+p.path, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready)))
				b.waitFor(p.path+" settled", `document.readyState === "complete" && !document.querySelector('.htmx-request')`)
				if dark := eval[bool](b, pageIsDark); dark != (scheme == "dark") {
					t.Fatalf("%s in the %s theme: the page is dark: %v", p.path, scheme, dark)
				}
				b.axeCheck(fmt.Sprintf("%s at %d px, %s", p.path, width, scheme), src)
			}
		}
	}
	for _, c := range []struct {
		width  int64
		scheme string
	}{{1366, "light"}, {390, "light"}, {1366, "dark"}, {390, "dark"}} {
		width := c.width
		b.run("the viewport", chromedp.EmulateViewport(width, 900), colorScheme(c.scheme))
		b.run("a bulk preview", chromedp.Navigate(s.URL+"/desk/incidents"), chromedp.WaitVisible(sel("incidents-table")),
			chromedp.SetValue(chromedp.CSS(`[data-testid="bulk-incident"] select[name="decision"]`), "note"),
			chromedp.SendKeys(chromedp.CSS(`[data-testid="bulk-incident"] [data-testid="bulk-reason"]`), "checked"),
			chromedp.Click(chromedp.CSS(`[data-testid="bulk-incident"] [data-testid="bulk-preview"]`)),
			chromedp.WaitVisible(sel("batch-apply")))
		b.axeCheck(fmt.Sprintf("the bulk preview at %d px, %s", width, c.scheme), src)
		b.run("applying it", chromedp.Click(sel("batch-apply")), chromedp.WaitVisible(sel("batch-progress")))
		b.axeCheck(fmt.Sprintf("the batch's result at %d px, %s", width, c.scheme), src)
	}
	b.signOut()
	b.axeCheck("the signed-out page, dark", src)
	b.run("the light theme", colorScheme("light"))
	b.axeCheck("the signed-out page, light", src)
	b.clean()
}
