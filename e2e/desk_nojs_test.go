package e2e

import (
	"context"
	"fmt"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// TestDesk_DecisionsWithoutJavaScript: with scripts disabled in the
// browser, every decision still works from plain forms — confirm executed,
// retry, take, approve, and a bulk decision previewed then applied.
func TestDesk_DecisionsWithoutJavaScript(t *testing.T) {
	s, idp := deskServer(t)
	unknown := str(s.intoDesk(t, "evt_nojs1:crm_task", true), "id")
	failed := str(s.intoDesk(t, "evt_nojs2:crm_task", false), "id")
	var bulk []string
	for i := range 3 {
		bulk = append(bulk, str(s.intoDesk(t, fmt.Sprintf("evt_nojs_b%d:crm_task", i), false), "id"))
	}
	coupon := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_nojs:coupon", "type": "coupon.issue",
		"content": map[string]any{"customer": "c_7", "percent": 15}})
	if coupon.Status != 201 {
		t.Fatalf("coupon: %d %s", coupon.Status, coupon.Raw)
	}

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ben, "/desk")
	b.run("turning scripts off", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	b.run("the queue", chromedp.Navigate(s.URL+"/desk/queue"), chromedp.WaitVisible(sel("queue-table")))
	if eval[bool](b, `typeof window.htmx !== "undefined"`) {
		t.Fatal("scripts still run")
	}

	// The assignee cell is there before the Take as after it: wait for the
	// plain form's round trip — the item's Take button gone from the page
	// the redirect shows — then read the ledger.
	b.run("taking an item", chromedp.Click(chromedp.CSS(`[data-id="`+unknown+`"] [data-testid="row-take"]`)),
		chromedp.WaitNotPresent(chromedp.CSS(`[data-id="`+unknown+`"] [data-testid="row-take"]`)),
		chromedp.WaitVisible(chromedp.CSS(`[data-id="`+unknown+`"] [data-testid="row-assignee"]`)))
	if got := str(s.do(t, "GET", "/v1/operations/"+unknown, nil).Body, "assignee"); got != "ben@example.com" {
		t.Fatalf("after Take, assignee %q", got)
	}

	b.run("confirming executed", chromedp.Navigate(s.URL+"/desk/operations/"+unknown), chromedp.WaitVisible(sel("form-confirm-executed")),
		chromedp.SendKeys(sel("result-ref-input"), "crm_task_1"),
		chromedp.SendKeys(sel("reason-confirm-executed"), "found it in the CRM"),
		chromedp.Click(sel("submit-confirm-executed")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="op-status"] [data-state="completed"]`)))

	b.run("retrying", chromedp.Navigate(s.URL+"/desk/operations/"+failed), chromedp.WaitVisible(sel("form-retry")),
		chromedp.SendKeys(sel("reason-retry"), "owner recreated"),
		chromedp.Click(sel("submit-retry")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="op-status"] [data-state="received"]`)))

	b.run("approving", chromedp.Navigate(s.URL+"/desk/approvals"), chromedp.WaitVisible(sel("approval-item")),
		chromedp.SendKeys(sel("reason-approve"), "15% matches the brief"),
		chromedp.Click(sel("submit-approve")),
		chromedp.WaitVisible(sel("approvals-empty")))

	// No decision is chosen for the person: the form starts on none.
	b.run("a bulk retry", chromedp.Navigate(s.URL+"/desk/incidents"), chromedp.WaitVisible(sel("incidents-table")),
		chromedp.SetValue(chromedp.CSS(`[data-testid="bulk-incident"] [data-testid="bulk-decision"]`), "retry"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="bulk-incident"] [data-testid="bulk-reason"]`), "owner recreated"),
		chromedp.Click(chromedp.CSS(`[data-testid="bulk-incident"] [data-testid="bulk-preview"]`)),
		chromedp.WaitVisible(sel("batch-apply")),
		chromedp.Click(sel("batch-apply")),
		chromedp.WaitVisible(sel("batch-id")))

	want := map[string]string{unknown: "completed", failed: "received", str(coupon.Body, "id"): "received"}
	for _, id := range bulk {
		want[id] = "received"
	}
	for id, st := range want {
		if got := s.state(t, id); got != st {
			t.Errorf("%s is %s, want %s", id, got, st)
		}
	}
	b.clean()
}
