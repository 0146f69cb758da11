package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_StaleContradictionKeptAndRecorded: Ann has an unknown outcome
// open and finds the charge at the provider; meanwhile Lea cancels it as
// not executed. Ann's confirmation is refused as stale, but the page keeps
// her reference and reason beside Lea's cancellation and offers to record
// the contradiction; she does, the item is flagged and stays cancelled.
func TestDesk_StaleContradictionKeptAndRecorded(t *testing.T) {
	s, idp := deskServer(t)
	op := s.intoDesk(t, "evt_contra1:crm_task", true)
	id := str(op, "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/operations/"+id)
	b.run("the confirm form", chromedp.WaitVisible(sel("form-confirm-executed")))
	lea := idp.IDToken(t, lea)
	if r := s.call(t, lea, "POST", "/v1/operations/"+id+"/resolve", map[string]any{"action": "confirm_not_executed",
		"then": "cancel", "reason": "no charge in the dashboard", "expected_version": num(op, "version")}); r.Status != 200 {
		t.Fatalf("Lea's cancel: %d %s", r.Status, r.Raw)
	}
	b.run("confirming on the stale page", chromedp.SendKeys(sel("result-ref-input"), "ch_3PqX81order88101"),
		chromedp.SendKeys(sel("reason-confirm-executed"), "the charge is in the provider's log"),
		chromedp.Click(sel("submit-confirm-executed")), chromedp.WaitVisible(sel("kept-decision")))
	if got := b.text(sel("kept-meanwhile")); !strings.Contains(got, "cancelled as not executed by lea@example.com") {
		t.Fatalf("meanwhile: %q", got)
	}
	if got := b.text(sel("kept-typed")); !strings.Contains(got, "ch_3PqX81order88101") {
		t.Fatalf("kept: %q", got)
	}
	if got := b.text(sel("kept-reason")); !strings.Contains(got, "provider's log") {
		t.Fatalf("kept reason: %q", got)
	}
	b.run("recording the contradiction", chromedp.Click(sel("record-contradiction-submit")),
		chromedp.WaitVisible(sel("contradicted")))
	if got := b.text(sel("contradicted")); !strings.Contains(got, "ch_3PqX81order88101") || !strings.Contains(got, "ann@example.com") {
		t.Fatalf("the flag says %q", got)
	}
	if got := b.text(sel("decision-recorded")); !strings.Contains(got, "contradiction was recorded") {
		t.Fatalf("banner: %q", got)
	}
	if s.state(t, id) != "cancelled" {
		t.Fatal("recording the contradiction changed the state")
	}
	b.clean()
}
