package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opshandoff/handoff/auth/oidctest"
)

var (
	ann = oidctest.Person{Subject: "u-ann", Email: "ann@example.com", Name: "Ann Operator", Groups: []string{"ops"}}
	lea = oidctest.Person{Subject: "u-lea", Email: "lea@example.com", Name: "Lea Lead", Groups: []string{"leads"}}
	ben = oidctest.Person{Subject: "u-ben", Email: "ben@example.com", Name: "Ben Lead", Groups: []string{"leads"}}
	// adm sees every page of the desk, the admin's Notifications included.
	adm = oidctest.Person{Subject: "u-adm", Email: "adm@example.com", Name: "Ada Admin", Groups: []string{"admins"}}
)

// intoDesk drives an operation through the API into unknown_outcome (the
// worker began and timed out) or failed_terminal (the provider refused the
// content before anything was sent), and returns it.
func (s *server) intoDesk(t *testing.T, key string, unknown bool) map[string]any {
	t.Helper()
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": key, "type": "crm.task.create",
		"event_id": strings.Split(key, ":")[0], "correlation_id": "run-" + key,
		"content": map[string]any{"title": "Follow up", "owner": "u_9", "ref": key}, "claim": map[string]any{"worker": "w-1"}})
	if r.Status != 201 {
		t.Fatalf("register %s: %d %s", key, r.Status, r.Raw)
	}
	id, token := str(r.Body, "id"), num(r.Body, "claim", "lease", "token")
	settle := map[string]any{"lease_token": token, "outcome": "failed_terminal",
		"error": map[string]any{"class": "validation", "code": "422", "message": "owner u_9 does not exist"}}
	if unknown {
		if b := s.do(t, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": token}); b.Status != 200 {
			t.Fatalf("begin: %d %s", b.Status, b.Raw)
		}
		settle["outcome"], settle["error"] = "unknown_outcome", map[string]any{"class": "timeout", "message": "read timeout"}
	}
	r = s.do(t, "POST", "/v1/operations/"+id+"/settle", settle)
	if want := map[bool]string{true: "unknown_outcome", false: "failed_terminal"}[unknown]; r.Status != 200 || str(r.Body, "state") != want {
		t.Fatalf("settle: %d %s", r.Status, r.Raw)
	}
	return r.Body
}

// state reads an operation's state through the API.
func (s *server) state(t *testing.T, id string) string {
	t.Helper()
	return str(s.do(t, "GET", "/v1/operations/"+id, nil).Body, "state")
}

// TestDesk_ConfirmExecuted: an unknown outcome appears in the queue, is
// found by its provider key, opened, confirmed executed with the provider's
// reference and a reason, and leaves the queue; the timeline names the
// person who decided.
func TestDesk_ConfirmExecuted(t *testing.T) {
	s, idp := deskServer(t)
	s.intoDesk(t, "evt_other:crm_task", true)
	op := s.intoDesk(t, "evt_e2e1:crm_task", true)
	id, pk := str(op, "id"), str(op, "provider_key")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/queue")
	b.run("the queue lists both", chromedp.WaitVisible(sel("queue-table")))
	b.waitFor("two rows", `document.querySelectorAll('[data-testid="queue-row"]').length === 2`)

	// The keyboard: j and k move between rows, / goes to the search.
	b.run("j, j, k", chromedp.KeyEvent("j"), chromedp.KeyEvent("j"), chromedp.KeyEvent("k"))
	b.waitFor("the first row focused", `document.activeElement === document.querySelector('[data-queue-row] a[data-row-link]')`)
	b.run("/", chromedp.KeyEvent("/"))
	b.waitFor("the search focused", `document.activeElement === document.querySelector('[data-testid="queue-search"]')`)

	// Live search: type the provider key; htmx swaps the results and puts
	// the search in the address bar.
	// (The DevTools key event types the "/" that desk.js's preventDefault
	// keeps a real keyboard from typing; clear it.)
	b.run("searching", chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="queue-search"]').value = ""`),
		chromedp.SendKeys(sel("queue-search"), pk))
	b.waitFor("only the searched row", `(() => { const r = document.querySelectorAll('[data-testid="queue-row"]');
		return r.length === 1 && r[0].dataset.id === "`+id+`" })()`)
	b.waitFor("the search in the URL", `location.search.includes("q=`+pk+`")`)

	// A search still in flight would swap the row out from under the click.
	b.waitFor("the search settled", `!document.querySelector('.htmx-request')`)
	b.run("opening it", chromedp.Click(chromedp.CSS(`[data-testid="queue-row"] a[data-row-link]`)),
		chromedp.WaitVisible(sel("form-confirm-executed")))
	if got := b.text(sel("provider-key")); got != pk {
		t.Fatalf("provider key on the page: %q", got)
	}
	b.run("confirming", chromedp.SendKeys(sel("result-ref-input"), "crm_task_981"),
		chromedp.SendKeys(sel("reason-confirm-executed"), "Found task crm_task_981 in the CRM"),
		chromedp.Click(sel("submit-confirm-executed")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="op-status"] [data-state="completed"]`)))
	last := b.lastTimelineEvent()
	for _, want := range []string{"resolved", "Ann Operator", "ann@example.com", "Found task crm_task_981 in the CRM"} {
		if !strings.Contains(last, want) {
			t.Fatalf("the timeline's last event lacks %q: %q", want, last)
		}
	}
	if s.state(t, id) != "completed" {
		t.Fatal("the API does not say completed")
	}
	b.run("back to the queue", chromedp.Navigate(s.URL+"/desk/queue"), chromedp.WaitVisible(sel("queue-table")))
	b.waitFor("it left the queue", `document.querySelectorAll('[data-testid="queue-row"]').length === 1 &&
		!document.querySelector('[data-id="`+id+`"]')`)
	b.clean()
}

func (b *browser) lastTimelineEvent() string {
	b.t.Helper()
	return eval[string](b, `(() => { const e = document.querySelectorAll('[data-testid="timeline-event"]');
		return e[e.length-1].innerText })()`)
}

// TestDesk_RetryFailedTerminal: a terminal failure is retried after its
// cause was fixed; a worker may claim it again.
func TestDesk_RetryFailedTerminal(t *testing.T) {
	s, idp := deskServer(t)
	op := s.intoDesk(t, "evt_e2e2:crm_task", false)
	id := str(op, "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/queue?state=failed_terminal")
	b.waitFor("the failed item", `document.querySelector('[data-testid="queue-row"][data-id="`+id+`"]') !== null`)
	if got := b.text(sel("queue-row")); !strings.Contains(got, "owner u_9 does not exist") || !strings.Contains(got, "retry or cancel") {
		t.Fatalf("row: %q", got)
	}
	// A search still in flight would swap the row out from under the click.
	b.waitFor("the search settled", `!document.querySelector('.htmx-request')`)
	b.run("opening it", chromedp.Click(chromedp.CSS(`[data-testid="queue-row"] a[data-row-link]`)),
		chromedp.WaitVisible(sel("form-retry")))
	b.run("retrying", chromedp.SendKeys(sel("reason-retry"), "Owner u_9 recreated in the CRM"),
		chromedp.Click(sel("submit-retry")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="op-status"] [data-state="received"]`)))
	if last := b.lastTimelineEvent(); !strings.Contains(last, "Ann Operator") || !strings.Contains(last, "Owner u_9 recreated") {
		t.Fatalf("timeline: %q", last)
	}
	if c := s.do(t, "POST", "/v1/operations/"+id+"/claim", map[string]any{"worker": "w-2"}); c.Status != 200 {
		t.Fatalf("claim after the retry: %d %s", c.Status, c.Raw)
	}
	b.clean()
}
