package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_Screenshots renders the overview, queue, incidents, an incident, operation and
// approvals pages at desktop width, and the queue and an operation at phone
// width, in the light theme, and the queue and an operation in the dark
// theme at desktop and phone width, into the folder HANDOFF_SCREENSHOTS names; the
// desk guide (docs/guides/desk.md) shows the committed ones. It fills the desk through the API the way
// a day of failures would. Run it when the pages change:
//
//	HANDOFF_SCREENSHOTS=$PWD/../docs/screenshots go test -run Screenshots ./e2e/
func TestDesk_Screenshots(t *testing.T) {
	dir := os.Getenv("HANDOFF_SCREENSHOTS")
	if dir == "" {
		t.Skip("HANDOFF_SCREENSHOTS names no folder to write the screenshots to")
	}
	s, idp := deskServer(t)
	var target string
	for i, unknown := range []bool{true, false, true, true, false, true, false, true} {
		op := s.intoDesk(t, fmt.Sprintf("evt_%d:crm_task", 4100+i*7), unknown)
		if i == 2 {
			target = str(op, "id")
		}
		if i == 3 || i == 4 {
			s.call(t, idp.IDToken(t, lea), "POST", "/v1/operations/"+str(op, "id")+"/assign",
				map[string]any{"assignee": "lea@example.com", "reason": "on call tonight", "expected_version": num(op, "version")})
		}
	}
	note := s.call(t, idp.IDToken(t, ann), "POST", "/v1/operations/"+target+"/notes",
		map[string]any{"text": "Asked the CRM team whether task creation timed out on their side."})
	if note.Status != 200 {
		t.Fatalf("note: %d %s", note.Status, note.Raw)
	}
	for i, pct := range []int{50, 10} {
		r := s.do(t, "POST", "/v1/operations", map[string]any{"key": fmt.Sprintf("evt_%d:coupon", 5200+i), "type": "coupon.issue",
			"event_id": fmt.Sprintf("evt_%d", 5200+i), "content": map[string]any{"customer": "c_7", "percent": pct, "valid_days": 30}})
		if i == 0 {
			rev := s.call(t, idp.IDToken(t, ann), "POST", "/v1/operations/"+str(r.Body, "id")+"/revisions",
				map[string]any{"content": map[string]any{"customer": "c_7", "percent": 15, "valid_days": 30},
					"reason": "50% was a typo; the campaign gives 15%", "expected_version": num(r.Body, "version")})
			if rev.Status != 200 {
				t.Fatalf("revise: %d %s", rev.Status, rev.Raw)
			}
		}
	}

	b := newBrowser(t, s, idp, 1440, 900)
	b.signIn(idp, lea, "/desk")
	b.run("finding an incident", chromedp.Navigate(s.URL+"/desk/incidents"), chromedp.WaitVisible(sel("incident-link")))
	incident := eval[string](b, `document.querySelector('[data-testid="incident-link"]').getAttribute('href')`)
	for _, shot := range []struct {
		name, path, ready string
		width             int64
		scheme            string
	}{
		{"overview", "/desk", "overview-entered", 1440, "light"},
		{"queue", "/desk/queue", "queue-table", 1440, "light"},
		{"incidents", "/desk/incidents", "incidents-table", 1440, "light"},
		{"incident", incident, "incident-facts", 1440, "light"},
		{"operation", "/desk/operations/" + target, "timeline", 1440, "light"},
		{"approvals", "/desk/approvals", "approval-item", 1440, "light"},
		{"queue-phone", "/desk/queue", "queue-table", 390, "light"},
		{"operation-phone", "/desk/operations/" + target, "timeline", 390, "light"},
		{"queue-dark", "/desk/queue", "queue-table", 1440, "dark"},
		{"operation-dark", "/desk/operations/" + target, "timeline", 1440, "dark"},
		{"queue-phone-dark", "/desk/queue", "queue-table", 390, "dark"},
	} {
		b.run("the width of "+shot.name, chromedp.EmulateViewport(shot.width, 900), colorScheme(shot.scheme)) // desk_theme_test.go
		b.run(shot.name, chromedp.Navigate(s.URL+shot.path), chromedp.WaitVisible(sel(shot.ready)))
		height := min(eval[int64](b, `document.documentElement.scrollHeight`), 2400)
		b.run("sizing "+shot.name, chromedp.EmulateViewport(shot.width, height))
		png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", shot.name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, shot.name+".png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
		b.run("resetting the size", chromedp.EmulateViewport(1440, 900))
	}
	b.clean()
}
