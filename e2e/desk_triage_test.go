package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// waitIncidents waits for the receiver to have n incident notices and
// returns them.
func (r *receiver) waitIncidents(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		r.mu.Lock()
		got := append([]string{}, r.incidents...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-r.got:
		case <-deadline:
			t.Fatalf("%d of %d incident notices arrived: %v", len(got), n, got)
		}
	}
}

// TestDesk_IncidentTriageJourney: two timeouts of one type open an
// incident — announced, then its growth — signed and delivered to the
// receiver. Ann opens it, acknowledges it, and decides both items with its
// own bulk form, previewed then applied; the incident resolves itself. A
// third timeout reopens it, announced again.
func TestDesk_IncidentTriageJourney(t *testing.T) {
	rx, url := newReceiver(t)
	s, idp := deskServer(t, notifyEnv(url)...)
	s.intoDesk(t, "evt_tri1:crm_task", true)
	opened := rx.waitIncidents(t, 1)[0]
	f := strings.Fields(opened)
	if len(f) != 4 || f[0] != "incident.opened" || f[2] != "+1" || f[3] != "reopened=false" {
		t.Fatalf("the first notice: %q", opened)
	}
	id := f[1]
	s.intoDesk(t, "evt_tri2:crm_task", true)
	if got := rx.waitIncidents(t, 2)[1]; got != "incident.grew "+id+" +1 reopened=false" {
		t.Fatalf("the growth notice: %q", got)
	}

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/incidents")
	b.run("the incident", chromedp.WaitVisible(sel("incidents-table")), chromedp.Click(sel("incident-link")),
		chromedp.WaitVisible(sel("triage")))
	if loc := eval[string](b, `location.pathname`); loc != "/desk/incidents/"+id {
		t.Fatalf("the incident's page is %s, want /desk/incidents/%s", loc, id)
	}
	if got := b.text(sel("incident-counts")); got != "2 open, 2 ever" {
		t.Fatalf("counts: %q", got)
	}
	b.run("acknowledging", chromedp.Click(sel("submit-acknowledge")), chromedp.WaitVisible(sel("incident-ack")))
	if got := b.text(sel("incident-ack")); !strings.Contains(got, "acknowledged by ann@example.com") {
		t.Fatalf("acknowledged: %q", got)
	}
	form := `[data-testid="bulk-incident-items"] `
	if got := eval[string](b, `document.querySelector('`+form+`select[name="decision"]').value`); got != "" {
		t.Fatalf("the bulk form preselects %q for unknown outcomes", got)
	}
	b.run("previewing", chromedp.SetValue(chromedp.CSS(form+`select[name="decision"]`), "not_executed_cancel"),
		chromedp.SendKeys(chromedp.CSS(form+`[data-testid="bulk-reason"]`), "the CRM never got them"),
		chromedp.Click(chromedp.CSS(form+`[data-testid="bulk-preview"]`)), chromedp.WaitVisible(sel("batch-apply")))
	if got := b.text(sel("batch-summary")); !strings.HasPrefix(got, "2 items will be decided, 0 skipped") {
		t.Fatalf("preview: %q", got)
	}
	b.run("applying", chromedp.Click(sel("batch-apply")), chromedp.WaitVisible(sel("batch-id")))
	if got := b.text(sel("batch-counts")); got != "2 applied, 0 skipped, 0 failed." {
		t.Fatalf("result: %q", got)
	}
	b.run("the incident again", chromedp.Navigate(s.URL+"/desk/incidents/"+id), chromedp.WaitVisible(sel("incident-status")))
	if got := eval[string](b, `document.querySelector('[data-testid="incident-status"]').dataset.status`); got != "resolved" {
		t.Fatalf("after both items were decided the incident is %s", got)
	}
	if got := b.text(sel("incident-status-by")); !strings.Contains(got, "all items decided") {
		t.Fatalf("resolved: %q", got)
	}

	s.intoDesk(t, "evt_tri3:crm_task", true)
	if got := rx.waitIncidents(t, 3)[2]; got != "incident.opened "+id+" +1 reopened=true" {
		t.Fatalf("the reopening's notice: %q", got)
	}
	b.run("reloading", chromedp.Reload(), chromedp.WaitVisible(sel("incident-counts")))
	if got := b.text(sel("incident-counts")); got != "1 open, 3 ever" {
		t.Fatalf("reopened: %q", got)
	}
	b.clean()
}

// TestDesk_IncidentTriageWithoutJavaScript: with scripts disabled, every
// triage form works as a plain form: acknowledge, owner, note, resolve,
// reopen.
func TestDesk_IncidentTriageWithoutJavaScript(t *testing.T) {
	s, idp := deskServer(t)
	s.intoDesk(t, "evt_trinojs:crm_task", false)
	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ben, "/desk/incidents")
	b.run("turning scripts off", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	b.run("the incident", chromedp.Navigate(s.URL+"/desk/incidents"), chromedp.WaitVisible(sel("incidents-table")),
		chromedp.Click(sel("incident-link")), chromedp.WaitVisible(sel("triage")))
	if eval[bool](b, `typeof window.htmx !== "undefined"`) {
		t.Fatal("scripts still run")
	}
	b.run("acknowledging", chromedp.Click(sel("submit-acknowledge")), chromedp.WaitVisible(sel("incident-ack")))
	me := eval[string](b, `document.querySelector('[data-testid="owner-select"] option:nth-child(2)').value`)
	b.run("owning it", chromedp.Click(chromedp.CSS(`[data-testid="triage-owner"] summary`)),
		chromedp.SetValue(sel("owner-select"), me), chromedp.Click(sel("submit-owner")))
	b.waitFor("the owner set", `document.querySelector('[data-testid="incident-done"]')?.textContent === "Owner set."`)
	if got := b.text(sel("incident-owner")); got != "ben@example.com" {
		t.Fatalf("owner: %q", got)
	}
	b.run("a note", chromedp.Click(chromedp.CSS(`[data-testid="triage-notes"] summary`)),
		chromedp.SendKeys(sel("text-notes"), "CRM status page says degraded"), chromedp.Click(sel("submit-notes")))
	b.waitFor("the note added", `document.querySelector('[data-testid="incident-done"]')?.textContent === "Note added."`)
	b.run("resolving", chromedp.Click(chromedp.CSS(`[data-testid="triage-resolve"] summary`)),
		chromedp.SendKeys(sel("text-resolve"), "owner recreated"), chromedp.Click(sel("resolve-confirm-open")),
		chromedp.Click(sel("submit-resolve")), chromedp.WaitVisible(sel("form-reopen")))
	b.run("reopening", chromedp.Click(chromedp.CSS(`[data-testid="triage-reopen"] summary`)),
		chromedp.SendKeys(sel("text-reopen"), "not yet"), chromedp.Click(sel("submit-reopen")),
		chromedp.WaitVisible(sel("submit-resolve")))
	timeline := b.text(sel("incident-timeline"))
	for _, want := range []string{"acknowledged it", "set the owner to ben@example.com", "CRM status page says degraded",
		"resolved it", "owner recreated", "reopened it", "not yet"} {
		if !strings.Contains(timeline, want) {
			t.Fatalf("the timeline lacks %q:\n%s", want, timeline)
		}
	}
	b.clean()
}

// firstIncident is the path of the first incident on the list.
func (b *browser) firstIncident() string {
	b.t.Helper()
	b.run("the incidents", chromedp.Navigate(b.server+"/desk/incidents"), chromedp.WaitVisible(sel("incident-link")))
	return eval[string](b, `new URL(document.querySelector('[data-testid="incident-link"]').href).pathname`)
}
