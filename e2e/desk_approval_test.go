package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_FourEyes: Lea revises a coupon's content; her own revision is
// shown to her but cannot be approved by her — the button is disabled, and
// the server refuses even when the page is tampered with. Ben approves it.
func TestDesk_FourEyes(t *testing.T) {
	s, idp := deskServer(t)
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_e2e3:coupon", "type": "coupon.issue",
		"content": map[string]any{"customer": "c_7", "percent": 50}})
	if r.Status != 201 || str(r.Body, "state") != "awaiting_approval" {
		t.Fatalf("register: %d %s", r.Status, r.Raw)
	}
	id := str(r.Body, "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, lea, "/desk/operations/"+id)
	b.run("revising", chromedp.WaitVisible(sel("form-revise")),
		chromedp.Click(sel("action-revise")+" summary"),
		chromedp.SetValue(chromedp.CSS(`[data-testid="form-revise"] textarea[name="content"]`), `{"customer": "c_7", "percent": 15}`),
		chromedp.SendKeys(sel("reason-revise"), "50% was a typo; the campaign gives 15%"),
		chromedp.Click(sel("submit-revise")),
		chromedp.WaitVisible(sel("own-revision")))

	b.run("her approvals page", chromedp.Navigate(s.URL+"/desk/approvals"), chromedp.WaitVisible(sel("approval-item")))
	item := b.text(sel("approval-item"))
	for _, want := range []string{"You made this version", `-   "percent": 50`, `+   "percent": 15`, "lea@example.com"} {
		if !strings.Contains(item, want) {
			t.Fatalf("the approval lacks %q: %q", want, item)
		}
	}
	if !eval[bool](b, `document.querySelector('[data-testid="submit-approve"]').disabled`) {
		t.Fatal("Lea can press approve on her own revision")
	}
	// Even with the page tampered with, the ledger refuses, and the browser
	// is sent back (303) to the operation, which says why.
	b.run("forcing the form", chromedp.Evaluate[chromedp.Void](`(() => {
		const f = document.querySelector('[data-testid="form-approve"]');
		f.querySelectorAll('[disabled]').forEach(e => e.disabled = false);
		f.querySelector('textarea').value = "approving my own";
		f.submit(); return true })()`),
		chromedp.WaitVisible(sel("problem")))
	if got := b.text(sel("problem")); !strings.Contains(got, "someone else must decide") {
		t.Fatalf("refusal: %q", got)
	}
	if loc := eval[string](b, `location.pathname`); loc != "/desk/operations/"+id {
		t.Fatalf("after the refusal the address is %s", loc)
	}
	if s.state(t, id) != "awaiting_approval" {
		t.Fatal("Lea's own approval went through")
	}

	b.signOut()
	b.signIn(idp, ben, "/desk/approvals")
	b.run("Ben's approvals page", chromedp.WaitVisible(sel("approval-item")))
	b.waitFor("an enabled approve button", `!document.querySelector('[data-testid="submit-approve"]').disabled &&
		!document.querySelector('[data-testid="own-revision"]')`)
	b.run("approving", chromedp.SendKeys(sel("reason-approve"), "15% matches the campaign brief"),
		chromedp.Click(sel("submit-approve")),
		chromedp.WaitVisible(sel("approvals-empty")))
	op := s.do(t, "GET", "/v1/operations/"+id, nil)
	if str(op.Body, "state") != "received" || str(op.Body, "approval", "by") != "ben@example.com" || num(op.Body, "content_version") != 2 {
		t.Fatalf("after approval: %s", op.Raw)
	}
	b.clean()
}
