package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_ShortKeysAndSummaries: two long keys that differ only at their
// end read apart in the queue, on the incident and in a bulk preview —
// shortened in the middle, the full key on hover and for screen readers —
// and the card's summary fields stand beside them for Lea, who may read
// the content; Ann, below content_visible_to, sees the keys and no
// summary.
func TestDesk_ShortKeysAndSummaries(t *testing.T) {
	raw, err := os.ReadFile("testdata/cards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cards := filepath.Join(t.TempDir(), "cards.yaml")
	withSummary := strings.Replace(string(raw), "- name: crm.task.create\n",
		"- name: crm.task.create\n  summary: [/owner, /title]\n  content_visible_to: approver\n", 1)
	if err := os.WriteFile(cards, []byte(withSummary), 0o600); err != nil {
		t.Fatal(err)
	}
	s, idp := deskServer(t, "HANDOFF_CARDS="+cards)
	prefix := "tenant-eu-west-1/shop-7781/checkout-2026-12-06/charge:order_2026-12-06_"
	for _, n := range []string{"88101", "88102"} {
		s.intoDeskWith(t, prefix+n, map[string]any{"owner": "u_" + n, "title": "Charge " + n})
	}

	b := newBrowser(t, s, idp, 1440, 900)
	check := func(who, where string, shown bool) {
		t.Helper()
		for _, n := range []string{"88101", "88102"} {
			key := prefix + n
			got := eval[[]string](b, `(() => { const a = [...document.querySelectorAll('a.key')].find(a => a.title === `+jsString(key)+`);
				if (!a) return ["", "", ""];
				const short = a.querySelector('[data-testid="key-short"]');
				const row = a.closest('tr');
				const sum = row && row.querySelector('[data-testid="summary"]');
				return [short ? short.textContent : "", a.textContent, sum ? sum.textContent : ""] })()`)
			if got[0] != "tenant-eu-west-1/…/charge:order_2026-12-06_"+n || !strings.Contains(got[1], key) {
				t.Fatalf("%s, %s: key shown %q, read %q", who, where, got[0], got[1])
			}
			if shown && !strings.Contains(got[2], "u_"+n) {
				t.Fatalf("%s, %s: summary %q", who, where, got[2])
			}
			if !shown && got[2] != "" {
				t.Fatalf("%s, %s: the hidden content shows: %q", who, where, got[2])
			}
		}
	}
	b.signIn(idp, lea, "/desk/queue")
	b.run("the queue", chromedp.WaitVisible(sel("row-link")))
	check("Lea", "the queue", true)
	b.run("the incident", chromedp.Navigate(s.URL+"/desk/incidents"), chromedp.WaitVisible(sel("incident-link")),
		chromedp.Click(sel("incident-link")), chromedp.WaitVisible(sel("incident-items-table")))
	incident := eval[string](b, `location.href`)
	check("Lea", "the incident", true)
	form := `[data-testid="bulk-incident-items"] `
	b.run("previewing", chromedp.SetValue(chromedp.CSS(form+`select[name="decision"]`), "note"),
		chromedp.SendKeys(chromedp.CSS(form+`[data-testid="bulk-reason"]`), "looking at the provider"),
		chromedp.Click(chromedp.CSS(form+`[data-testid="bulk-preview"]`)), chromedp.WaitVisible(sel("batch-apply")))
	check("Lea", "the preview", true)

	b.signOut()
	b.signIn(idp, ann, "/desk/queue")
	b.run("the queue", chromedp.WaitVisible(sel("row-link")))
	check("Ann", "the queue", false)
	b.run("the incident", chromedp.Navigate(incident), chromedp.WaitVisible(sel("incident-items-table")))
	check("Ann", "the incident", false)
	b.run("previewing", chromedp.SetValue(chromedp.CSS(form+`select[name="decision"]`), "note"),
		chromedp.SendKeys(chromedp.CSS(form+`[data-testid="bulk-reason"]`), "looking at the provider"),
		chromedp.Click(chromedp.CSS(form+`[data-testid="bulk-preview"]`)), chromedp.WaitVisible(sel("batch-apply")))
	check("Ann", "the preview", false)
	b.clean()
}

// jsString quotes s as a JavaScript string.
func jsString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
