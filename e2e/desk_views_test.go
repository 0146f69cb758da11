package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/opshandoff/handoff/cards"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

// TestDesk_SavedViewJourney: Ann filters the queue to terminal failures
// and saves the filter as a view shared with the team; Lea, signed in
// after her, finds it among the saved views, opens it and gets the same
// filtered list — and cannot delete it.
func TestDesk_SavedViewJourney(t *testing.T) {
	s, idp := deskServer(t)
	for i := range 3 {
		s.intoDesk(t, fmt.Sprintf("evt_sv%d:crm_task", i), false)
	}
	s.intoDesk(t, "evt_sv_unknown:crm_task", true)

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/queue")
	b.run("filtering to terminal failures",
		chromedp.SetValue(chromedp.CSS(`[data-testid="queue-filter"] select[name="state"]`), "failed_terminal"),
		chromedp.Click(chromedp.CSS(`[data-testid="queue-filter"] button[type="submit"]`)))
	b.waitFor("the filtered list", `location.search === "?state=failed_terminal" && document.querySelectorAll('[data-testid="queue-row"]').length === 3`)
	annRows := eval[string](b, rowIDsJS)
	axe := axeSource(t)
	b.run("the save form", chromedp.Click(chromedp.CSS(`[data-testid="save-view"] > summary`)), chromedp.WaitVisible(sel("save-view-name")))
	b.axeCheck("the queue with its save form open", axe)
	b.run("saving the view, shared",
		chromedp.SendKeys(sel("save-view-name"), "Terminal failures"),
		chromedp.Click(sel("save-view-shared")),
		chromedp.Click(sel("save-view-submit")),
		chromedp.WaitVisible(sel("saved-views")))
	b.waitFor("the view in Ann's list", `[...document.querySelectorAll('[data-testid="view"]')].some(v => v.dataset.name === "Terminal failures")`)
	if got := eval[string](b, `document.querySelector('[data-testid="view-owner"]').textContent`); !strings.Contains(got, "yours, shared with the team") {
		t.Fatalf("Ann's view: %q", got)
	}
	b.signOut()

	b.signIn(idp, lea, "/desk/queue")
	b.waitFor("the whole queue", `document.querySelectorAll('[data-testid="queue-row"]').length === 4`)
	b.run("opening the shared view",
		chromedp.Click(chromedp.CSS(`[data-testid="saved-views"] > summary`)),
		chromedp.WaitVisible(sel("view-link")))
	if got := b.text(sel("view-owner")); got != "shared by ann@example.com" {
		t.Fatalf("Lea reads the view as %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll('[data-testid="view-delete"]').length`); n != 0 {
		t.Fatalf("Lea is offered to delete Ann's view (%d buttons)", n)
	}
	b.axeCheck("the queue with its saved views open", axe)
	for _, width := range []int64{1440, 390, 360} {
		b.run("the viewport", chromedp.EmulateViewport(width, 900))
		if got := eval[[]string](b, layoutProblems); len(got) > 0 {
			t.Errorf("the saved views at %d px:\n  %s", width, strings.Join(got, "\n  "))
		}
	}
	b.run("the viewport", chromedp.EmulateViewport(1366, 900))
	b.run("following it", chromedp.Click(sel("view-link")))
	b.waitFor("the filtered list", `location.search === "?state=failed_terminal" && document.querySelectorAll('[data-testid="queue-row"]').length === 3`)
	if got := eval[string](b, rowIDsJS); got != annRows {
		t.Fatalf("Lea's rows %s, Ann's %s", got, annRows)
	}
	b.clean()
}

const rowIDsJS = `[...document.querySelectorAll('[data-testid="queue-row"]')].map(r => r.dataset.id).join(",")`

// TestDesk_SelectAllMatchingJourney: 250 terminal failures, five pages of
// the queue. Ann filters them, selects the page, is offered all 250, takes
// it, previews a cancel of 250 and applies it: the ledger has every one of
// them cancelled, and the unknown outcome beside them untouched.
func TestDesk_SelectAllMatchingJourney(t *testing.T) {
	s, idp := deskServer(t)
	const n = 250
	l := seedLedger(t, s)
	seedFailedTerminal(t, l, "evt_all", n)
	other := str(s.intoDesk(t, "evt_outside:crm_task", true), "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/queue?state=failed_terminal")
	b.run("the queue", chromedp.WaitVisible(sel("queue-table")))
	if !eval[bool](b, `document.querySelector('[data-select-all]').hidden`) {
		t.Fatal("the offer of every matching item shows before the page is selected")
	}
	// On a phone the table's header is out of sight; the page's selection
	// is not.
	b.run("the queue on a phone", chromedp.EmulateViewport(390, 844), chromedp.WaitVisible(sel("select-page")))
	b.run("the viewport", chromedp.EmulateViewport(1366, 900))
	b.run("selecting the page", chromedp.Click(sel("select-page")), chromedp.WaitVisible(sel("select-all")))
	if got := b.text(sel("select-all-count")); got != fmt.Sprint(n) {
		t.Fatalf("select all %s, want %d", got, n)
	}
	axe := axeSource(t)
	b.axeCheck("the queue offering all matching", axe)
	for _, width := range []int64{390, 360} {
		b.run("the viewport", chromedp.EmulateViewport(width, 900))
		if got := eval[[]string](b, layoutProblems); len(got) > 0 {
			t.Errorf("the offer at %d px:\n  %s", width, strings.Join(got, "\n  "))
		}
	}
	b.run("the viewport", chromedp.EmulateViewport(1366, 900))
	b.run("selecting all matching, previewing a cancel",
		chromedp.Click(sel("bulk-all")),
		chromedp.WaitVisible(chromedp.CSS(`#bulk-selected [data-testid="bulk-reason"]`)),
		chromedp.SetValue(chromedp.CSS(`#bulk-selected select[name="decision"]`), "cancel"),
		chromedp.SendKeys(chromedp.CSS(`#bulk-selected [data-testid="bulk-reason"]`), "the campaign was withdrawn"),
		chromedp.Click(chromedp.CSS(`#bulk-selected [data-testid="bulk-preview"]`)),
		chromedp.WaitVisible(sel("batch-apply")))
	if got := b.text(sel("batch-matching")); !strings.Contains(got, fmt.Sprintf("matches %d items", n)) {
		t.Fatalf("preview: %q", got)
	}
	if got := b.text(sel("batch-summary")); !strings.HasPrefix(got, fmt.Sprintf("%d items will be decided, 0 skipped", n)) {
		t.Fatalf("preview: %q", got)
	}
	b.axeCheck("the preview of all matching", axe)
	b.run("applying", chromedp.Click(sel("batch-apply")), chromedp.WaitVisible(sel("batch-id")))
	if got := b.text(sel("batch-counts")); got != fmt.Sprintf("%d applied, 0 skipped, 0 failed.", n) {
		t.Fatalf("result: %q", got)
	}
	assertCancelled(t, l, "evt_all", n)
	if got := s.state(t, other); got != "unknown_outcome" {
		t.Fatalf("the item outside the filter is %s", got)
	}
	b.clean()
}

// TestDesk_SelectAllWithoutJavaScript: with scripts off the offer is a
// plain checkbox beside the table, and the bulk form takes every matching
// item through the same preview.
func TestDesk_SelectAllWithoutJavaScript(t *testing.T) {
	s, idp := deskServer(t)
	const n = 60 // more than a page
	l := seedLedger(t, s)
	seedFailedTerminal(t, l, "evt_nojs_all", n)

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk")
	b.run("turning scripts off", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	b.run("the queue", chromedp.Navigate(s.URL+"/desk/queue?state=failed_terminal"), chromedp.WaitVisible(sel("select-all")))
	b.run("selecting all matching, previewing a cancel",
		chromedp.Click(sel("bulk-all")),
		chromedp.Click(chromedp.CSS(`[data-testid="bulk"] > summary`)),
		chromedp.SetValue(chromedp.CSS(`#bulk-selected select[name="decision"]`), "cancel"),
		chromedp.SendKeys(chromedp.CSS(`#bulk-selected [data-testid="bulk-reason"]`), "withdrawn"),
		chromedp.Click(chromedp.CSS(`#bulk-selected [data-testid="bulk-preview"]`)),
		chromedp.WaitVisible(sel("batch-apply")))
	if got := b.text(sel("batch-summary")); !strings.HasPrefix(got, fmt.Sprintf("%d items will be decided", n)) {
		t.Fatalf("preview: %q", got)
	}
	b.run("applying", chromedp.Click(sel("batch-apply")), chromedp.WaitVisible(sel("batch-id")))
	assertCancelled(t, l, "evt_nojs_all", n)
	b.clean()
}

// seedLedger is a Ledger of this test's own on the server's database, with
// the server's cards: many items are registered through it directly, far
// faster than through the API.
func seedLedger(t *testing.T, s *server) *domain.Ledger {
	t.Helper()
	var dbURL string
	for _, e := range s.env {
		if v, ok := strings.CutPrefix(e, "HANDOFF_DATABASE_URL="); ok {
			dbURL = v
		}
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cs, err := cards.Load("testdata/cards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	versions, err := st.SyncCards(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range cs {
		c.Version, c.SHA256 = versions[name], store.CardSHA256(c)
		cs[name] = c
	}
	return domain.NewLedger(st, cs)
}

var seedWorkflow = domain.Actor{Kind: domain.ActorWorkflow, Name: "seed", Namespace: "campaigns"}

// seedFailedTerminal registers n crm tasks, claims them and settles each
// failed_terminal, as a workflow would.
func seedFailedTerminal(t *testing.T, l *domain.Ledger, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		key := fmt.Sprintf("%s%03d:crm_task", prefix, i)
		res, err := l.Workflow.Register(ctx, seedWorkflow, domain.Registration{Key: key, Type: "crm.task.create", EventID: strings.Split(key, ":")[0],
			Content: []byte(fmt.Sprintf(`{"owner":"u_9","title":"Follow up","ref":%q}`, key))})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := l.Workflow.Claim(ctx, seedWorkflow, res.Operation.ID, domain.Claim{Worker: "seed"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Workflow.Settle(ctx, seedWorkflow, res.Operation.ID, domain.Settle{LeaseToken: cl.Lease.Token, Outcome: domain.OutcomeFailedTerminal,
			Error: &domain.ErrorInfo{Class: domain.ClassValidation, Code: "422", Message: "owner u_9 does not exist"}}); err != nil {
			t.Fatal(err)
		}
	}
}

// assertCancelled reads the ledger: every one of the n items is cancelled.
func assertCancelled(t *testing.T, l *domain.Ledger, prefix string, n int) {
	t.Helper()
	ctx := context.Background()
	cancelled, cursor := 0, ""
	for {
		ops, next, err := l.Store.List(ctx, domain.ListQuery{Namespace: "campaigns", Limit: 500, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			if !strings.HasPrefix(op.Key, prefix) {
				continue
			}
			if op.State != domain.Cancelled {
				t.Errorf("%s is %s, want cancelled", op.Key, op.State)
			}
			cancelled++
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if cancelled != n {
		t.Fatalf("%d items of %s in the ledger, want %d", cancelled, prefix, n)
	}
}
