package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestDesk_LookupFailuresOnce: "Look up now" pressed five times against a
// provider that answers 503 shows one line — failed 5 times since the
// first, the last one's time — not five; the timeline keeps all five.
func TestDesk_LookupFailuresOnce(t *testing.T) {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(provider.Close)
	base, err := os.ReadFile("testdata/cards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cardsFile := filepath.Join(t.TempDir(), "cards.yaml")
	lookupCard := `
- name: mail.lookup
  provider: postbox
  provider_idempotency: none
  lookup: api
  lookup_adapter:
    request: {method: GET, url: "` + provider.URL + `/v1/messages?key={provider_key}"}
    found: {status: [200], ref: /data/0/id, key: /data/0/key, when_nonempty: /data}
    not_found: {status: [404]}
    window: 10m
  retry: {max_attempts: 1, backoff: 1s}
  lease: 30s
`
	if err := os.WriteFile(cardsFile, append(base, lookupCard...), 0o600); err != nil {
		t.Fatal(err)
	}
	s, idp := deskServer(t, "HANDOFF_CARDS="+cardsFile, "HANDOFF_LOOKUP_ALLOW_PRIVATE=true")
	id := s.unknownAfterBegin(t, "evt_look5:mail", "mail.lookup", map[string]any{"to": "c@example.com", "template": "receipt"})
	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/operations/"+id)
	for i := 1; i <= 5; i++ {
		b.run("looking up", chromedp.Navigate(s.URL+"/desk/operations/"+id), chromedp.WaitVisible(sel("submit-lookup")),
			chromedp.Click(sel("submit-lookup")), chromedp.WaitVisible(sel("decision-recorded")))
		b.waitFor(fmt.Sprintf("lookup %d in the timeline", i), fmt.Sprintf(`document.querySelectorAll('li[data-action="lookup_run"]').length === %d`, i))
	}
	got := b.text(sel("lookup-evidence"))
	if !strings.Contains(got, "failed 5 times since ") || !strings.Contains(got, "; last: ") || !strings.Contains(got, "503") {
		t.Errorf("the lookup panel reads %q, want one line: failed 5 times since …; last: …", got)
	}
	if n := eval[int](b, `document.querySelectorAll('[data-testid="lookup-evidence"], [data-testid="lookup-tries"] li').length`); n != 2 {
		t.Errorf("the lookup panel has %d lines of evidence and tries, want 2 (the evidence, the try)", n)
	}
	b.clean()
}

// TestDesk_QueueSearchPointsToContent: the queue's filter always links to
// the Operations page's search, with what is typed in the box, and a search
// that finds nothing in the queue says where to search every operation.
func TestDesk_QueueSearchPointsToContent(t *testing.T) {
	s, idp := deskServer(t)
	s.intoDesk(t, "evt_search1:crm_task", true)
	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/queue")
	b.run("the queue", chromedp.WaitVisible(sel("queue-content-search")))
	if href := eval[string](b, `document.querySelector('[data-testid="queue-content-search"]').getAttribute('href')`); href != "/desk/operations" {
		t.Errorf("the content search links to %q", href)
	}
	b.run("searching", chromedp.SendKeys(sel("queue-search"), "Follow up nowhere"), chromedp.WaitVisible(sel("queue-empty-wider")))
	if href := eval[string](b, `document.querySelector('[data-testid="queue-content-search"]').getAttribute('href')`); href != "/desk/operations?q=Follow%20up%20nowhere" {
		t.Errorf("the content search, after typing, links to %q", href)
	}
	if got := b.text(sel("queue-empty")); !strings.Contains(got, "search every operation for “Follow up nowhere”") {
		t.Errorf("the empty queue reads %q", got)
	}
	b.run("following it", chromedp.Click(sel("queue-empty-wider")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="queue-filter"][action="/desk/operations"]`)))
	if got := eval[string](b, `location.pathname + location.search`); got != "/desk/operations?q=Follow+up+nowhere" {
		t.Errorf("the link led to %s", got)
	}
	b.clean()
}

// TestDesk_AuditFilterLocal: with times shown in UTC the audit filter's
// From and To say UTC; with Local chosen they say local and are read in
// the browser's zone (Asia/Kolkata, UTC+5:30 here): a From ten minutes ago
// in local time finds the sign-in just recorded, which read as UTC would
// be five hours in the future.
func TestDesk_AuditFilterLocal(t *testing.T) {
	s, idp := deskServer(t)
	b := newBrowser(t, s, idp, 1366, 900)
	b.run("a browser in Kolkata", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Kolkata"})
		return err
	}))
	b.signIn(idp, adm, "/desk/audit")
	b.run("the audit", chromedp.WaitVisible(sel("audit-filter")))
	if got := b.text(sel("audit-from-label")) + " / " + b.text(sel("audit-to-label")); got != "From (UTC) / To (UTC)" {
		t.Errorf("in UTC the filter says %q", got)
	}
	b.run("choosing local", chromedp.Click(sel("time-local")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="time-local"][aria-pressed="true"]`)))
	if got := b.text(sel("audit-from-label")) + " / " + b.text(sel("audit-to-label")); got != "From (local) / To (local)" {
		t.Errorf("in Local the filter says %q", got)
	}
	kolkata := time.FixedZone("IST", 5*3600+1800)
	from := time.Now().In(kolkata).Add(-10 * time.Minute).Format("2006-01-02T15:04")
	b.run("from ten minutes ago, local", chromedp.Navigate(s.URL+"/desk/audit?action=signed_in&from="+from),
		chromedp.WaitVisible(sel("audit-filter")))
	if n := eval[int](b, `document.querySelectorAll('[data-testid="audit-row"]').length`); n < 1 {
		t.Errorf("from %s local finds no sign-in: read in another zone", from)
	}
	b.clean()
}
