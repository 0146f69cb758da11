package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

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

// TestDesk_FrontDoorAndPhone: the start-up log names the desk's address,
// "/" leads to the desk through sign-in, and at 390 px no page of the desk
// scrolls sideways — not the operation with deep content and a long key,
// not the approval of a revised snapshot, not the sign-in page.
func TestDesk_FrontDoorAndPhone(t *testing.T) {
	s, idp := deskServer(t)
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
	b := newBrowser(t, s, idp, 500, 844)
	b.run("a 390 px phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateTouch))
	wide := func(path, ready string) {
		t.Helper()
		b.run("opening "+path, chromedp.Navigate(s.URL+path), chromedp.WaitVisible(chromedp.CSS(ready)))
		b.waitFor(path+" settled", `document.readyState === "complete" && !document.querySelector('.htmx-request')`)
		if w := eval[int64](b, `document.scrollingElement.scrollWidth`); w > 390 {
			over := eval[string](b, `[...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391)
				.slice(-5).map(e => e.tagName + "." + e.className + " " + Math.round(e.getBoundingClientRect().right)).join(", ")`)
			t.Errorf("%s at 390 px is %d px wide; too wide: %s", path, w, over)
		}
	}

	// The front door, through sign-in, lands on the desk.
	idp.Next(lea)
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
		{"/desk/approvals", `[data-testid="approval-item"]`},
		{"/desk/audit", "main h1"},
		{"/desk/types", "main h1"},
		{"/desk/incidents", `[data-testid="incidents-table"]`},
		{"/desk/operations", `[data-testid="queue-table"]`},
		{"/desk/operations/op_missing", "main h1"}, // a 404, which the browser logs
	} {
		wide(p.path, p.ready)
	}
	b.signOut()
	wide("/auth/signed-out", "main")
	b.clean()
}
