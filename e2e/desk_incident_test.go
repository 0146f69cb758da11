package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_IncidentBulkRetry: eight items failed the same way make one
// incident. Ann previews a retry of all eight with one reason; Lea cancels
// one of them meanwhile; Ann applies: seven are retried, each audited with
// the one batch_id, and the changed one is skipped and reported.
func TestDesk_IncidentBulkRetry(t *testing.T) {
	s, idp := deskServer(t)
	var ids []string
	var versions []int64
	for i := range 8 {
		op := s.intoDesk(t, fmt.Sprintf("evt_inc%d:crm_task", i), false)
		ids, versions = append(ids, str(op, "id")), append(versions, num(op, "version"))
	}
	s.intoDesk(t, "evt_other:crm_task", true) // another incident

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/queue")
	b.run("the incidents", chromedp.Click(sel("incidents-link")), chromedp.WaitVisible(sel("incidents-table")))
	b.waitFor("two incidents", `document.querySelectorAll('[data-testid="incident-row"]').length === 2`)
	if first := b.text(sel("incident-row")); !strings.Contains(first, "8 items") || !strings.Contains(first, "validation:422") {
		t.Fatalf("the largest incident: %q", first)
	}
	b.run("previewing a retry of all eight",
		chromedp.SetValue(chromedp.CSS(`[data-testid="bulk-incident"] select[name="decision"]`), "retry"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="bulk-incident"] [data-testid="bulk-reason"]`), "Owner u_9 recreated in the CRM"),
		chromedp.Click(chromedp.CSS(`[data-testid="bulk-incident"] [data-testid="bulk-preview"]`)),
		chromedp.WaitVisible(sel("batch-apply")))
	if got := b.text(sel("batch-summary")); !strings.Contains(got, "8 items will be decided, 0 skipped") {
		t.Fatalf("preview: %q", got)
	}
	if s.state(t, ids[0]) != "failed_terminal" {
		t.Fatal("the preview changed an item")
	}
	if r := s.call(t, idp.IDToken(t, lea), "POST", "/v1/operations/"+ids[5]+"/resolve", map[string]any{"action": "cancel",
		"reason": "customer gone", "expected_version": versions[5]}); r.Status != 200 {
		t.Fatalf("Lea's cancel: %d %s", r.Status, r.Raw)
	}
	b.run("applying", chromedp.Click(sel("batch-apply")), chromedp.WaitVisible(sel("batch-id")))
	if got := b.text(sel("batch-counts")); got != "7 applied, 1 skipped, 0 failed." {
		t.Fatalf("result: %q", got)
	}
	// The result is a page of its own (303): a reload applies nothing again.
	if loc := eval[string](b, `location.pathname`); !strings.HasPrefix(loc, "/desk/batch/bat_") {
		t.Fatalf("the result is at %s, want its own page", loc)
	}
	b.run("reloading the result", chromedp.Reload(), chromedp.WaitVisible(sel("batch-id")))
	skipped := eval[string](b, `[...document.querySelectorAll('[data-testid="batch-row"][data-outcome="skipped"]')].map(r => r.dataset.id + " " + r.innerText).join("|")`)
	if !strings.HasPrefix(skipped, ids[5]+" ") || !strings.Contains(skipped, "resolved by lea@example.com") {
		t.Fatalf("skipped: %q", skipped)
	}
	batchID := b.text(sel("batch-id"))
	for i, id := range ids {
		items := s.do(t, "GET", "/v1/operations/"+id+"/timeline", nil).Body["items"].([]any)
		last := items[len(items)-1].(map[string]any)
		got := str(last, "detail", "batch_id")
		if i == 5 {
			if got != "" || s.state(t, id) != "cancelled" {
				t.Fatalf("the changed item: batch_id %q, state %s", got, s.state(t, id))
			}
			continue
		}
		if got != batchID || str(last, "reason") != "Owner u_9 recreated in the CRM" || s.state(t, id) != "received" {
			t.Fatalf("item %d: %v", i, last)
		}
	}
	b.clean()
}
