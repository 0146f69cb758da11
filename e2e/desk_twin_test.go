package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_TwinSideBySide: the same content registered under a new key
// while the first one's outcome is unknown waits for approval; in a real
// browser its operation page and the approvals page show the twin beside
// it — the two keys in one row of the comparison, the twin's state,
// provider key and a link — and that the content is the same.
func TestDesk_TwinSideBySide(t *testing.T) {
	s, idp := deskServer(t)
	first := s.intoDesk(t, "evt_e2e9:crm_task", true)
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_e2e9:crm_task-again", "type": "crm.task.create",
		"content": map[string]any{"title": "Follow up", "owner": "u_9", "ref": "evt_e2e9:crm_task"}})
	if r.Status != 201 || str(r.Body, "state") != "awaiting_approval" || str(r.Body, "last_error", "code") != "twin_unresolved" {
		t.Fatalf("twin: %d %s", r.Status, r.Raw)
	}
	twin := str(r.Body, "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ben, "/desk/operations/"+twin)
	for _, page := range []string{"/desk/operations/" + twin, "/desk/approvals"} {
		b.run(page, chromedp.Navigate(s.URL+page), chromedp.WaitVisible(sel("twin")))
		panel := b.text(sel("twin"))
		for _, want := range []string{"evt_e2e9:crm_task-again", "evt_e2e9:crm_task", str(first, "provider_key"), "The same content"} {
			if !strings.Contains(panel, want) {
				t.Fatalf("%s: the twin panel lacks %q: %q", page, want, panel)
			}
		}
		if got := strings.ToLower(b.text(sel("twin-state"))); !strings.Contains(got, "unknown") {
			t.Fatalf("%s: the twin's state reads %q", page, got)
		}
		// Side by side: this one's key and the twin's on one line, this one first.
		if !eval[bool](b, `(() => { const a = document.querySelector('[data-testid="twin-this-key"]').getBoundingClientRect(),
			o = document.querySelector('[data-testid="twin-key"]').getBoundingClientRect();
			return a.width > 0 && o.width > 0 && Math.abs(a.top - o.top) < 2 && a.right <= o.left })()`) {
			t.Fatalf("%s: the two operations are not shown side by side", page)
		}
		if href := eval[string](b, `document.querySelector('[data-testid="twin-link"]').getAttribute('href')`); href != "/desk/operations/"+str(first, "id") {
			t.Fatalf("%s: the twin links to %q", page, href)
		}
	}
	b.clean()
}
