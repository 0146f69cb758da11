package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestDesk_NoteDoesNotBlockADecision: Ann has a terminal failure open; Lea
// adds a note and takes it meanwhile. Ann's retry, from the page she
// loaded before, goes through. Then Lea retries another item Ann has open:
// Ann's cancel is refused, the address bar rests on the operation (303),
// and the notice says Lea retried it, and when.
func TestDesk_NoteDoesNotBlockADecision(t *testing.T) {
	s, idp := deskServer(t)
	op := s.intoDesk(t, "evt_friction1:crm_task", false)
	id := str(op, "id")
	other := s.intoDesk(t, "evt_friction2:crm_task", false)
	otherID := str(other, "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/operations/"+id)
	b.run("the retry form", chromedp.WaitVisible(sel("form-retry")))
	lea := idp.IDToken(t, lea)
	if r := s.call(t, lea, "POST", "/v1/operations/"+id+"/notes", map[string]any{"text": "the CRM team is looking"}); r.Status != 200 {
		t.Fatalf("note: %d %s", r.Status, r.Raw)
	}
	if r := s.call(t, lea, "POST", "/v1/operations/"+id+"/assign", map[string]any{"assignee": "lea@example.com",
		"reason": "on call", "expected_version": num(op, "version") + 1}); r.Status != 200 {
		t.Fatalf("assign: %d %s", r.Status, r.Raw)
	}
	b.run("retrying from the page loaded before", chromedp.SendKeys(sel("reason-retry"), "Owner u_9 recreated"),
		chromedp.Click(sel("submit-retry")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="op-status"] [data-state="received"]`)))
	if s.state(t, id) != "received" {
		t.Fatal("Ann's retry did not go through after Lea's note")
	}

	b.run("the other item", chromedp.Navigate(s.URL+"/desk/operations/"+otherID), chromedp.WaitVisible(sel("form-cancel")))
	if r := s.call(t, lea, "POST", "/v1/operations/"+otherID+"/resolve", map[string]any{"action": "retry",
		"reason": "fixed", "expected_version": num(other, "version")}); r.Status != 200 {
		t.Fatalf("Lea's retry: %d %s", r.Status, r.Raw)
	}
	b.run("cancelling a page that is stale", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="action-cancel"]').open = true`),
		chromedp.SendKeys(sel("reason-cancel"), "customer withdrew"), chromedp.Click(sel("submit-cancel")),
		chromedp.WaitVisible(sel("conflict")))
	got := b.text(sel("conflict"))
	for _, want := range []string{"nothing was recorded", "Lea Lead <lea@example.com> retried it", " ago (at "} {
		if !strings.Contains(got, want) {
			t.Fatalf("the stale notice lacks %q: %q", want, got)
		}
	}
	if loc := eval[string](b, `location.pathname`); loc != "/desk/operations/"+otherID {
		t.Fatalf("the address bar rests on %s", loc)
	}
	if s.state(t, otherID) != "received" {
		t.Fatal("the stale cancel was applied")
	}
	b.clean()
}

// TestDesk_ExpiredSessionKeepsTheDraft: Ann types a decision, her session
// is gone by the time she submits; she signs in again and is back on the
// item with her text and a notice that nothing was recorded.
func TestDesk_ExpiredSessionKeepsTheDraft(t *testing.T) {
	s, idp := deskServer(t)
	op := s.intoDesk(t, "evt_expired:crm_task", true)
	id := str(op, "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/operations/"+id)
	b.run("typing a decision", chromedp.WaitVisible(sel("form-confirm-executed")),
		chromedp.SendKeys(sel("result-ref-input"), "crm_task_4711"),
		chromedp.SendKeys(sel("reason-confirm-executed"), "Found crm_task_4711 after a long search"))
	// The session ends while she types: the browser has no session anymore.
	b.run("the session expires", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, network.DeleteCookies, network.DeleteCookiesParams{Name: "handoff_session", URL: s.URL})
		return err
	}))
	idp.Next(ann)
	b.signingIn.Store(true)
	b.run("submitting", chromedp.Click(sel("submit-confirm-executed")), chromedp.WaitVisible(sel("signin-expired")))
	if got := b.text(sel("signin-expired")); !strings.Contains(got, "nothing was recorded") {
		t.Fatalf("the sign-in page says %q", got)
	}
	b.run("signing in again", chromedp.Click(sel("oidc-signin")), chromedp.WaitVisible(sel("session-expired")))
	b.signingIn.Store(false)
	if loc := eval[string](b, `location.pathname`); loc != "/desk/operations/"+id {
		t.Fatalf("after sign-in the person is on %s", loc)
	}
	if got := b.text(sel("session-expired")); !strings.Contains(got, "nothing was recorded") {
		t.Fatalf("notice: %q", got)
	}
	if s.state(t, id) != "unknown_outcome" {
		t.Fatal("a decision was recorded without a session")
	}
	ref := eval[string](b, `document.querySelector('[data-testid="result-ref-input"]').value`)
	reason := eval[string](b, `document.querySelector('[data-testid="reason-confirm-executed"]').value`)
	if ref != "crm_task_4711" || reason != "Found crm_task_4711 after a long search" {
		t.Fatalf("the draft was not restored: %q %q", ref, reason)
	}
	b.run("submitting again", chromedp.Click(sel("submit-confirm-executed")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="op-status"] [data-state="completed"]`)))
	b.run("a reload shows no stale notice", chromedp.Reload(), chromedp.WaitVisible(sel("op-status")))
	if n := eval[int64](b, `document.querySelectorAll('[data-testid="session-expired"]').length`); n != 0 {
		t.Fatal("the flash was shown twice")
	}
	b.clean()
}

// TestDesk_RetryAsksASecondConfirmation: the CRM does not deduplicate and
// the key was sent, so confirming "not executed" and retrying needs a
// second confirmation that names the risk; without it nothing is recorded.
func TestDesk_RetryAsksASecondConfirmation(t *testing.T) {
	s, idp := deskServer(t)
	op := s.intoDesk(t, "evt_risk:crm_task", true)
	id := str(op, "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/operations/"+id)
	b.run("confirming not executed, then retry", chromedp.WaitVisible(sel("form-confirm-not-executed")),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="action-confirm-not-executed"]').open = true`),
		chromedp.Click(chromedp.CSS(`[data-testid="form-confirm-not-executed"] input[value="retry"]`)),
		chromedp.SendKeys(sel("reason-confirm-not-executed"), "No task in the CRM"))
	if risk := eval[string](b, `document.querySelector('[data-testid="confirm-risk-confirm-not-executed"]').parentElement.innerText`); !strings.Contains(risk, "acme-crm does not deduplicate") {
		t.Fatalf("the second confirmation says %q", risk)
	}
	b.run("submitting without it", chromedp.Click(sel("submit-confirm-not-executed")), chromedp.WaitVisible(sel("problem")))
	if got := b.text(sel("problem")); !strings.Contains(got, "confirm the risk") || s.state(t, id) != "unknown_outcome" {
		t.Fatalf("refusal %q, state %s", got, s.state(t, id))
	}
	b.run("confirming the risk", chromedp.Click(sel("confirm-risk-confirm-not-executed")), chromedp.Click(sel("submit-confirm-not-executed")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="op-status"] [data-state="received"]`)))
	b.clean()
}
