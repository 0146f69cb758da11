package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// layoutProblems measures the page as a person sees it and lists what is
// wrong with its layout: the page scrolls sideways; a table cell is
// narrower than its column role's minimum (--min-key … in app.css); a
// header breaks inside a word; two elements share an id. Tables shown as cards (a phone) have no
// columns and are measured only for fitting the screen.
const layoutProblems = `(() => {
	const out = [];
	const root = document.documentElement;
	if (root.scrollWidth > root.clientWidth + 1) out.push("the page scrolls sideways: " + root.scrollWidth + " px in " + root.clientWidth);
	const rem = parseFloat(getComputedStyle(root).fontSize);
	const vars = getComputedStyle(root);
	const mins = {"c-key": "--min-key", "c-state": "--min-state", "c-time": "--min-time", "c-count": "--min-count",
		"c-text": "--min-text", "c-act": "--min-act"};
	const minOf = {};
	for (const [cls, v] of Object.entries(mins)) minOf[cls] = parseFloat(vars.getPropertyValue(v)) * rem;
	minOf["c-form"] = 16 * rem;
	for (const table of document.querySelectorAll("main table")) {
		if (!table.checkVisibility()) continue;
		const cards = getComputedStyle(table).display !== "table";
		const r = table.getBoundingClientRect();
		if (cards && r.right > root.clientWidth + 1) out.push("a card list runs off the screen: " + Math.round(r.right) + " px");
		if (cards) continue;
		for (const cell of table.querySelectorAll("th, td")) {
			const role = [...cell.classList].find(c => c in minOf);
			if (!role || !cell.checkVisibility()) continue;
			const w = cell.getBoundingClientRect().width;
			if (w + 0.5 < minOf[role]) out.push(role + " cell " + Math.round(w) + " px < " + minOf[role] + " px: " + cell.innerText.slice(0, 40));
		}
	}
	for (const th of document.querySelectorAll("main th")) {
		if (!th.checkVisibility()) continue;
		const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
		for (let n = walker.nextNode(); n; n = walker.nextNode()) {
			for (const m of n.data.matchAll(/\S+/g)) {
				const range = document.createRange();
				range.setStart(n, m.index); range.setEnd(n, m.index + m[0].length);
				const tops = new Set([...range.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top)));
				if (tops.size > 1) out.push("header word broken across lines: " + m[0]);
			}
		}
	}
	const ids = {};
	for (const e of document.querySelectorAll("[id]")) ids[e.id] = (ids[e.id] || 0) + 1;
	for (const [id, n] of Object.entries(ids)) if (n > 1) out.push("the id " + id + " is on " + n + " elements");
	return out.slice(0, 12);
})()`

// realisticDesk fills the desk the way a bad night does: long keys, 1.6 KB
// errors, a 120-line content, a revised snapshot awaiting approval.
func realisticDesk(t *testing.T, s *server) (deep, longError string) {
	t.Helper()
	longErr := strings.TrimSpace(strings.Repeat("upstream rejected the request: owner_id u_9 is not a member of workspace ws_live_7f3a9c; ", 18))
	for i := range 24 {
		key := fmt.Sprintf("evt_2026_12_01_checkout_session_cs_live_a1B2c3D4e5F6g7H8i9J0_%02d:crm_task", i)
		r := s.do(t, "POST", "/v1/operations", map[string]any{"key": key, "type": "crm.task.create",
			"event_id": strings.Split(key, ":")[0], "correlation_id": "run-" + key,
			"content": map[string]any{"title": "Follow up", "owner": "u_9", "session": i}, "claim": map[string]any{"worker": "worker-eu-west-1-7c9d"}})
		if r.Status != 201 {
			t.Fatalf("register %s: %d %s", key, r.Status, r.Raw)
		}
		id, token := str(r.Body, "id"), num(r.Body, "claim", "lease", "token")
		if i == 1 {
			longError = id
		}
		settle := map[string]any{"lease_token": token, "outcome": "failed_terminal",
			"error": map[string]any{"class": "validation", "code": "422", "message": longErr}}
		if i%3 == 0 {
			if b := s.do(t, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": token}); b.Status != 200 {
				t.Fatalf("begin: %d %s", b.Status, b.Raw)
			}
			settle["outcome"], settle["error"] = "unknown_outcome", map[string]any{"class": "timeout", "message": longErr}
		}
		if r := s.do(t, "POST", "/v1/operations/"+id+"/settle", settle); r.Status != 200 {
			t.Fatalf("settle: %d %s", r.Status, r.Raw)
		}
	}
	lines := map[string]any{}
	for i := range 118 {
		lines[fmt.Sprintf("line_%03d", i)] = strings.Repeat("word ", i%9) + fmt.Sprint(i)
	}
	deep = s.intoDeskWith(t, "evt_2026_12_01_a_key_with_no_place_to_break_"+strings.Repeat("x", 80)+":crm_task", lines)
	coupon := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_layout:coupon", "type": "coupon.issue",
		"event_id": "evt_layout", "content": map[string]any{"customer": "c_7", "percent": 50, "valid_days": 30}})
	if coupon.Status != 201 {
		t.Fatalf("coupon: %d %s", coupon.Status, coupon.Raw)
	}
	return deep, longError
}

// TestDesk_Layout: every page of the desk, with realistic data, at 1440,
// 1280, 768, 390 and 360 px: no sideways page scroll, no table cell below
// its column role's minimum, no header broken inside a word; and at 1440
// in compact density, at least 12 queue rows in the first 900 px. At the
// widest and the narrowest, axe-core finds no violation on any of them.
func TestDesk_Layout(t *testing.T) {
	s, idp := deskServer(t)
	deep, longError := realisticDesk(t, s)
	axe := axeSource(t)
	b := newBrowser(t, s, idp, 1440, 900)
	b.signIn(idp, adm, "/desk")
	incident := b.firstIncident()
	pages := []struct{ path, ready string }{
		{"/desk", "main h1"},
		{"/desk/queue", `[data-testid="queue-table"]`},
		{"/desk/incidents", `[data-testid="incidents-table"]`},
		{incident, `[data-testid="incident-timeline"]`},
		{"/desk/operations", `[data-testid="queue-table"]`},
		{"/desk/operations/" + deep, `[data-testid="timeline"]`},
		{"/desk/operations/" + longError, `[data-testid="timeline"]`},
		{"/desk/approvals", `[data-testid="approval-item"]`},
		{"/desk/audit", `[data-testid="audit-table"]`},
		{"/desk/types", "main h1"},
		{"/desk/notifications", "main h1"},
	}
	for _, width := range []int64{1440, 1280, 768, 390, 360} {
		b.run("the viewport", chromedp.EmulateViewport(width, 900))
		for _, p := range pages {
			b.run("opening "+p.path, chromedp.Navigate(s.URL+p.path), chromedp.WaitVisible(chromedp.CSS(p.ready)))
			if got := eval[[]string](b, layoutProblems); len(got) > 0 {
				t.Errorf("%s at %d px:\n  %s", p.path, width, strings.Join(got, "\n  "))
			}
			if width == 1440 || width == 360 {
				b.axeCheck(fmt.Sprintf("%s at %d px", p.path, width), axe)
			}
		}
	}
	// A 1.6 KB error is three lines above the decision, whole on focus.
	b.run("the long error", chromedp.EmulateViewport(1440, 900), chromedp.Navigate(s.URL+"/desk/operations/"+longError),
		chromedp.WaitVisible(sel("evidence-last-error")))
	if h := eval[float64](b, `document.querySelector('[data-testid="evidence-last-error"]').getBoundingClientRect().height`); h > 80 {
		t.Errorf("the 1.6 KB error above the decision is %.0f px tall", h)
	}
	if n := eval[int](b, `document.querySelector('[data-testid="evidence-last-error"]').textContent.length`); n < 1600 {
		t.Errorf("the error's text is cut to %d characters", n)
	}
	b.run("the queue at 1440", chromedp.EmulateViewport(1440, 900), chromedp.Navigate(s.URL+"/desk/queue"),
		chromedp.WaitVisible(sel("queue-table")))
	if d := eval[float64](b, `parseFloat(getComputedStyle(document.querySelector("td")).paddingTop)`); d > 4 {
		t.Errorf("the queue at 1440 is not compact by default: cell padding %.1f px", d)
	}
	if n := eval[int](b, `[...document.querySelectorAll('[data-testid="queue-row"]')].filter(r => r.getBoundingClientRect().bottom <= 900).length`); n < 12 {
		t.Errorf("%d queue rows in the first 900 px at 1440, want at least 12", n)
	}
	// The density is the person's: comfortable sets rows apart, and stays.
	b.run("choosing comfortable", chromedp.Click(sel("density-comfortable")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="density-comfortable"][aria-pressed="true"]`)))
	if d := eval[string](b, `document.documentElement.dataset.density + " " + (parseFloat(getComputedStyle(document.querySelector("td")).paddingTop) >= 6)`); d != "comfortable true" {
		t.Errorf("after choosing comfortable: %s", d)
	}
	b.clean()
}
