package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_ApproverSeesHiddenCharacters: a coupon's text carries a
// right-to-left override, so a browser obeying it shows "10% off" where
// the provider will print "%01". The approver sees the override as a
// visible escape and a warning above the Approve button, on the approvals
// page and on the operation's page.
func TestDesk_ApproverSeesHiddenCharacters(t *testing.T) {
	s, idp := deskServer(t)
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_bidi:coupon", "type": "coupon.issue",
		"content": map[string]any{"customer": "c_9", "text": "Your code gives \u202e%01\u202c off"}})
	if r.Status != 201 || str(r.Body, "state") != "awaiting_approval" {
		t.Fatalf("register: %d %s", r.Status, r.Raw)
	}
	id := str(r.Body, "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ben, "/desk/approvals")
	b.run("the approvals page", chromedp.WaitVisible(sel("approval-item")))
	item := b.text(sel("approval-item"))
	if strings.ContainsRune(item, '\u202e') || strings.ContainsRune(item, '\u202c') {
		t.Fatalf("the approval shows the raw bidi controls: %q", item)
	}
	if !strings.Contains(item, "Your code gives ⟨U+202E⟩%01⟨U+202C⟩ off") {
		t.Fatalf("the approval does not show the override as an escape: %q", item)
	}
	warning := b.text(sel("approval-item") + ` [data-testid="hidden-chars-warning"]`)
	for _, want := range []string{"U+202E (right-to-left override)", "U+202C (pop directional formatting)"} {
		if !strings.Contains(warning, want) {
			t.Fatalf("the warning does not name %s: %q", want, warning)
		}
	}
	// The warning is read before the decision: it comes before the Approve button.
	if !eval[bool](b, `!!(document.querySelector('[data-testid="hidden-chars-warning"]').compareDocumentPosition(
		document.querySelector('[data-testid="submit-approve"]')) & Node.DOCUMENT_POSITION_FOLLOWING)`) {
		t.Fatal("the warning comes after the Approve button")
	}
	if n := eval[int](b, `document.querySelectorAll('[data-testid="hidden-char"]').length`); n < 2 {
		t.Fatalf("%d marked escapes, want the override and its pop", n)
	}

	b.run("the operation's page", chromedp.Navigate(s.URL+"/desk/operations/"+id), chromedp.WaitVisible(sel("content-json")))
	if got := b.text(sel("content-json")); !strings.Contains(got, "⟨U+202E⟩%01⟨U+202C⟩") {
		t.Fatalf("the content shows %q", got)
	}
	if got := b.text(sel("hidden-chars-warning")); !strings.Contains(got, "U+202E") {
		t.Fatalf("no warning beside the approval on the operation page: %q", got)
	}
	b.clean()
}
