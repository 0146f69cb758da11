package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// deepContent is content a phone must show without running off the screen:
// nested objects, long names, long words with nowhere to break.
func deepContent(depth int) map[string]any {
	leaf := map[string]any{"token": strings.Repeat("x9", 120), "url": "https://example.com/" + strings.Repeat("segment-", 30),
		"note": strings.Repeat("a long sentence that wraps ", 12)}
	for i := depth; i > 0; i-- {
		leaf = map[string]any{fmt.Sprintf("level_%d_with_a_rather_long_field_name", i): leaf, "n": i}
	}
	return leaf
}

// intoDeskWith registers an operation of type crm.task.create with the key
// and content given, and drives it to an unknown outcome.
func (s *server) intoDeskWith(t *testing.T, key string, content map[string]any) string {
	t.Helper()
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": key, "type": "crm.task.create",
		"event_id": "evt_phone", "content": content, "claim": map[string]any{"worker": "w-1"}})
	if r.Status != 201 {
		t.Fatalf("register %s: %d %s", key, r.Status, r.Raw)
	}
	id, token := str(r.Body, "id"), num(r.Body, "claim", "lease", "token")
	if b := s.do(t, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": token}); b.Status != 200 {
		t.Fatalf("begin: %d %s", b.Status, b.Raw)
	}
	r = s.do(t, "POST", "/v1/operations/"+id+"/settle", map[string]any{"lease_token": token, "outcome": "unknown_outcome",
		"error": map[string]any{"class": "timeout", "message": "read timeout after " + strings.Repeat("9", 90) + "ms"}})
	if r.Status != 200 {
		t.Fatalf("settle: %d %s", r.Status, r.Raw)
	}
	return id
}

// tapTargets are the controls a thumb must hit: at least 44 px tall on a
// phone. A checkbox or radio inside its label is hit through the label.
const tapTargets = `button, select, input[type=text], input[type=search], input[type=email], input[type=datetime-local],
	summary, label.check, input[type=checkbox]:not(label input), input[type=radio]:not(label input)`

// smallTargets lists the visible tap targets under 44 px tall.
const smallTargets = `[...document.querySelectorAll(tapTargets)]
	.filter(e => e.checkVisibility({visibilityProperty: true}))
	.filter(e => e.getBoundingClientRect().height < 43.5)
	.slice(0, 5).map(e => e.tagName + "." + e.className + " " + (e.textContent || e.name || "").trim().slice(0, 30) +
		" " + Math.round(e.getBoundingClientRect().height) + " px").join(", ")`

// TestDesk_FrontDoorAndPhone: the start-up log names the desk's address,
// "/" leads to the desk through sign-in, and at 390 px no page of the desk
// scrolls sideways and every control is a tap target of 44 px or more —
// every page of the navigation (an admin's, so Notifications too), the
// operation with deep content and a long key, its twin compared side by
// side, the approval of a revised snapshot and of the twin, the audit
// with rows, the incidents, a bulk preview and a batch's result, a missing
// operation and the signed-out page. The queue's filters fold into
// "Filters".
func TestDesk_FrontDoorAndPhone(t *testing.T) {
	s, idp := deskServer(t)
	// The server answers /readyz as soon as it listens, and may write its
	// start-up line a moment later: wait for the line, briefly.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(s.logs.String(), "desk="+s.URL+"/desk") &&
		time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if log := s.logs.String(); !strings.Contains(log, "desk="+s.URL+"/desk") {
		t.Fatalf("the start-up log does not name the desk's URL %s/desk:\n%s", s.URL, log)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(s.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/desk" {
		t.Fatalf("GET /: %d to %q, want 302 to /desk", resp.StatusCode, resp.Header.Get("Location"))
	}

	longKey := "evt_" + strings.Repeat("0123456789abcdef", 14) + ":crm_task"
	deep := s.intoDeskWith(t, longKey, deepContent(12))
	s.intoDesk(t, "evt_phone2:crm_task", false)
	// The same content under another key while the first's outcome is
	// unknown: a twin, compared side by side on its page and on Approvals.
	twin := s.do(t, "POST", "/v1/operations", map[string]any{"key": longKey + "-again", "type": "crm.task.create",
		"content": deepContent(12)})
	if twin.Status != 201 || str(twin.Body, "last_error", "code") != "twin_unresolved" {
		t.Fatalf("twin: %d %s", twin.Status, twin.Raw)
	}
	coupon := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_phone3:coupon", "type": "coupon.issue",
		"event_id": "evt_phone3", "content": map[string]any{"customer": "c_7", "percent": 50, "valid_days": 30}})
	rev := s.call(t, idp.IDToken(t, ann), "POST", "/v1/operations/"+str(coupon.Body, "id")+"/revisions",
		map[string]any{"content": deepContent(8), "reason": strings.Repeat("a reason with many words ", 8),
			"expected_version": num(coupon.Body, "version")})
	if rev.Status != 200 {
		t.Fatalf("revise: %d %s", rev.Status, rev.Raw)
	}

	// Headless Chromium keeps a window at least 500 px wide; the emulated
	// viewport is the phone's.
	// A drilled type: the Types page then shows its last drill and receipt
	// (the receipt itself is a JSON document, not a page).
	s.drillReceipt(t, "crm.task.create")
	b := newBrowser(t, s, idp, 500, 844)
	b.run("a 390 px phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateTouch))
	var check func(path, ready string)
	wide := func(path, ready string) {
		t.Helper()
		b.run("opening "+path, chromedp.Navigate(s.URL+path), chromedp.WaitVisible(chromedp.CSS(ready)))
		check(path, ready)
	}
	check = func(path, ready string) {
		t.Helper()
		b.waitFor(path+" settled", `document.readyState === "complete" && !document.querySelector('.htmx-request')`)
		if w := eval[int64](b, `document.scrollingElement.scrollWidth`); w > 390 {
			over := eval[string](b, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391)
				.slice(-5).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).join(", ")`)
			t.Errorf("%s at 390 px is %d px wide; too wide: %s", path, w, over)
		}
		if h := eval[float64](b, `document.querySelector('header.top').getBoundingClientRect().height`); h > 100 {
			t.Errorf("%s at 390×844 has a header %.0f px high, more than 100", path, h)
		}
		if small := eval[string](b, "const tapTargets = `"+tapTargets+"`; "+smallTargets); small != "" {
			t.Errorf("%s at 390 px has tap targets under 44 px: %s", path, small)
		}
	}

	// The front door, through sign-in, lands on the desk.
	idp.Next(adm)
	b.signingIn.Store(true)
	b.run("opening /", chromedp.Navigate(s.URL+"/"), chromedp.WaitVisible(sel("whoami")))
	b.signingIn.Store(false)
	if loc := eval[string](b, `location.pathname`); loc != "/desk" {
		t.Fatalf("/ led to %s after sign-in, want /desk", loc)
	}

	b.expect("404 (Not Found) " + s.URL + "/desk/operations/op_missing")
	for _, p := range []struct{ path, ready string }{
		{"/desk", "main h1"},
		{"/desk/queue", `[data-testid="queue-table"]`},
		{"/desk/queue?state=failed_terminal", `[data-testid="queue-table"]`},
		{"/desk/operations/" + deep, `[data-testid="timeline"]`},
		{"/desk/operations/" + str(coupon.Body, "id"), `[data-testid="timeline"]`},
		{"/desk/operations/" + str(twin.Body, "id"), `[data-testid="twin"]`}, // the twin comparison
		{"/desk/approvals", `[data-testid="approval-item"] [data-testid="twin"]`},
		{"/desk/audit", `[data-testid="audit-row"]`},
		{"/desk/audit?action=revised", `[data-testid="audit-row"]`},
		{"/desk/operations?q=segment", "main h1"},
		{"/desk/types", `a[title^="sha256 "]`}, // with the last drill and its receipt
		{"/desk/incidents", `[data-testid="incidents-table"]`},
		{b.firstIncident(), `[data-testid="incident-timeline"]`},
		{"/desk/operations", `[data-testid="queue-table"]`},
		{"/desk/notifications", "main h1"},
		{"/desk/operations/op_missing", "main h1"}, // a 404, which the browser logs
	} {
		wide(p.path, p.ready)
	}

	// On the phone the queue's filters are folded; "Filters" opens them.
	b.run("the queue", chromedp.Navigate(s.URL+"/desk/queue?state=unknown_outcome"), chromedp.WaitVisible(sel("queue-table")))
	b.waitFor("the filters folded", `!document.querySelector('[data-testid="queue-filters"]').open`)
	if visible := eval[bool](b, `document.querySelector('[data-testid="queue-search"]').checkVisibility()`); visible {
		t.Error("the queue's search shows on a phone before Filters is opened")
	}
	if got := b.text(chromedp.CSS(`[data-testid="queue-filters"] summary`)); got != "Filters (1 in use)" {
		t.Errorf("the folded filters say %q", got)
	}
	b.run("opening the filters", chromedp.Click(chromedp.CSS(`[data-testid="queue-filters"] summary`)),
		chromedp.WaitVisible(sel("queue-search")))

	// A bulk preview and the batch's result are pages of their own.
	b.run("a bulk preview", chromedp.Navigate(s.URL+"/desk/incidents"), chromedp.WaitVisible(sel("incidents-table")),
		chromedp.SetValue(chromedp.CSS(`[data-testid="bulk-incident"] select[name="decision"]`), "note"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="bulk-incident"] [data-testid="bulk-reason"]`), "checked at the CRM"),
		chromedp.Click(chromedp.CSS(`[data-testid="bulk-incident"] [data-testid="bulk-preview"]`)),
		chromedp.WaitVisible(sel("batch-apply")))
	check("/desk/batch/preview", `[data-testid="batch-table"]`)
	b.run("applying it", chromedp.Click(sel("batch-apply")), chromedp.WaitVisible(sel("batch-progress")))
	check(eval[string](b, `location.pathname`), `[data-testid="batch-table"]`)
	b.signOut()
	wide("/auth/signed-out", "main")
	b.clean()
}
