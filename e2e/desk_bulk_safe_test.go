package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_BulkFormsPreselectNothing: with the four bundled cards, an
// item of each on the desk makes an incident; no incident's bulk form, and
// not the queue's, starts on a decision, and the first one offered sends
// nothing again. Choosing the retry of charges the provider does not
// de-duplicate still asks for the explicit confirmation.
func TestDesk_BulkFormsPreselectNothing(t *testing.T) {
	s, idp := deskServer(t, "HANDOFF_CARDS=../cards/examples/cards.yaml")
	leaToken := idp.IDToken(t, lea)
	for _, typ := range []string{"crm.task.create", "email.send", "coupon.issue", "payment.charge"} {
		key := "evt_safe:" + typ
		r := s.do(t, "POST", "/v1/operations", map[string]any{"key": key, "type": typ, "event_id": "evt_safe",
			"content": map[string]any{"customer_id": "cus_1", "amount": 1200}})
		if r.Status != 201 {
			t.Fatalf("register %s: %d %s", typ, r.Status, r.Raw)
		}
		id := str(r.Body, "id")
		if str(r.Body, "state") == "awaiting_approval" {
			if a := s.call(t, leaToken, "POST", "/v1/operations/"+id+"/approve", map[string]any{"content_version": 1,
				"reason": "campaign approved"}); a.Status != 200 {
				t.Fatalf("approve %s: %d %s", typ, a.Status, a.Raw)
			}
		}
		c := s.do(t, "POST", "/v1/operations/"+id+"/claim", map[string]any{"worker": "w-1"})
		if c.Status != 200 {
			t.Fatalf("claim %s: %d %s", typ, c.Status, c.Raw)
		}
		token := num(c.Body, "lease", "token")
		if b := s.do(t, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": token}); b.Status != 200 {
			t.Fatalf("begin %s: %d %s", typ, b.Status, b.Raw)
		}
		// Unknown outcomes of the types no policy re-sends; terminal failures
		// of the one with a lookup adapter and the one the provider
		// deduplicates, which would not wait on a person.
		settle := map[string]any{"lease_token": token, "outcome": "unknown_outcome",
			"error": map[string]any{"class": "timeout", "message": "read timeout"}}
		if typ == "email.send" || typ == "coupon.issue" {
			settle["outcome"], settle["error"] = "failed_terminal", map[string]any{"class": "validation", "message": "refused"}
		}
		if st := s.do(t, "POST", "/v1/operations/"+id+"/settle", settle); st.Status != 200 {
			t.Fatalf("settle %s: %d %s", typ, st.Status, st.Raw)
		}
	}

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/incidents")
	b.run("the incidents", chromedp.WaitVisible(sel("incidents-table")))
	b.waitFor("an incident of each card", `document.querySelectorAll('[data-testid="incident-link"]').length >= 4`)
	links := eval[[]string](b, `[...document.querySelectorAll('[data-testid="incident-link"]')].map(a => a.href)`)
	const firstChoice = `(() => { const s = document.querySelector('[data-testid="bulk-decision"]');
		return [s.value, [...s.options].filter(o => o.value && !o.disabled)[0].value].join(" ") })()`
	sendsAgain := map[string]bool{"retry": true, "not_executed_retry": true, "resend_same_key": true}
	seen := map[string]bool{}
	for _, link := range links {
		b.run("an incident", chromedp.Navigate(link), chromedp.WaitVisible(sel("bulk-decision")))
		got := strings.Split(eval[string](b, firstChoice), " ")
		seen[eval[string](b, `document.querySelector('h1').textContent`)] = true
		if got[0] != "" || sendsAgain[got[1]] {
			t.Fatalf("%s: the bulk form starts on %q, its first decision is %q", link, got[0], got[1])
		}
	}
	if len(seen) < 4 {
		t.Fatalf("incidents seen: %v", seen)
	}
	b.run("the queue", chromedp.Navigate(s.URL+"/desk/queue"), chromedp.WaitVisible(sel("bulk-decision")))
	if got := strings.Split(eval[string](b, firstChoice), " "); got[0] != "" || sendsAgain[got[1]] {
		t.Fatalf("the queue's bulk form starts on %q, its first decision is %q", got[0], got[1])
	}

	// The risky retry of a charge still asks to confirm it, at the preview.
	for _, link := range links {
		b.run("an incident", chromedp.Navigate(link), chromedp.WaitVisible(sel("bulk-decision")))
		if strings.Contains(eval[string](b, `document.querySelector('h1').textContent`), "payment.charge") {
			break
		}
	}
	form := `[data-testid="bulk-incident-items"] `
	b.run("previewing a retry of charges", chromedp.SetValue(chromedp.CSS(form+`select[name="decision"]`), "not_executed_retry"),
		chromedp.SendKeys(chromedp.CSS(form+`[data-testid="bulk-reason"]`), "the processor has no record"),
		chromedp.Click(chromedp.CSS(form+`[data-testid="bulk-preview"]`)), chromedp.WaitVisible(sel("batch-apply")))
	if n := eval[int](b, `document.querySelectorAll('input[name="confirm_risk"][required]').length`); n != 1 {
		t.Fatalf("the retry of charges asks no confirmation (%d)", n)
	}
	b.clean()
}
