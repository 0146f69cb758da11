package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/opshandoff/handoff/auth/oidctest"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

// TestDesk_EveryDecisionWithoutJavaScript: with scripts disabled from the
// first page on — signing in and out included — every decision form the
// desk offers works as a plain form, and each is read back from the ledger
// itself (the server's database, through the store), not from the page:
// Take and Assign… in a queue row; on an item confirm executed, confirm not
// executed then retry, then cancel, cancel, retry, re-send under the same
// provider key, assign, note, revise and Look up now; a bulk decision on
// the selected rows and one on every row a filter matches; approve on the
// item and on the Approvals page, reject there; and an admin's Send again
// of a notification.
func TestDesk_EveryDecisionWithoutJavaScript(t *testing.T) {
	// The lookup adapter's provider has no record; the notification
	// receiver refuses everything, so every notification stays undelivered.
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }))
	t.Cleanup(provider.Close)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	t.Cleanup(receiver.Close)
	base, err := os.ReadFile("testdata/cards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cardsFile := filepath.Join(t.TempDir(), "cards.yaml")
	lookupCard := `
- name: mail.lookup
  provider: postbox
  provider_idempotency: none
  lookup: api
  lookup_adapter:
    request: {method: GET, url: "` + provider.URL + `/v1/messages?key={provider_key}"}
    found: {status: [200], ref: /data/0/id, key: /data/0/key, when_nonempty: /data}
    not_found: {status: [404]}
  retry: {max_attempts: 1, backoff: 1s}
  lease: 30s
`
	if err := os.WriteFile(cardsFile, append(base, lookupCard...), 0o600); err != nil {
		t.Fatal(err)
	}
	idp := oidctest.Start(t)
	s := startServer(t, append([]string{"HANDOFF_OIDC_ISSUER=" + idp.Issuer(), "HANDOFF_OIDC_CLIENT_ID=" + idp.ClientID,
		"HANDOFF_OIDC_CLIENT_SECRET=" + idp.ClientSecret, "HANDOFF_ROLE_MAP=ops=operator,leads=approver,admins=admin",
		"HANDOFF_CARDS=" + cardsFile, "HANDOFF_LOOKUP_ALLOW_PRIVATE=true"}, notifyEnv(receiver.URL)...)...)
	led := s.ledgerStore(t)

	into := func(name string, unknown bool) string {
		return str(s.intoDesk(t, "evt_nj_"+name+":crm_task", unknown), "id")
	}
	take, rowAssign := into("take", true), into("rowassign", false)
	executed, notRetry, notCancel := into("executed", true), into("notretry", true), into("notcancel", true)
	cancel, retry, assign, note := into("cancel", false), into("retry", false), into("assign", false), into("note", false)
	selected := []string{into("sel0", false), into("sel1", false)}
	matching := []string{into("all0", false), into("all1", false)}
	resend := s.unknownAfterBegin(t, "evt_nj_sms:sms", "sms.send", map[string]any{"to": "+15550100", "text": "Your order shipped"})
	looked := s.unknownAfterBegin(t, "evt_nj_look:mail", "mail.lookup", map[string]any{"to": "c@example.com", "template": "receipt"})
	coupon := func(name string, percent int) string {
		r := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_nj_" + name + ":coupon", "type": "coupon.issue",
			"content": map[string]any{"customer": "c_" + name, "percent": percent}})
		if r.Status != 201 || str(r.Body, "state") != "awaiting_approval" {
			t.Fatalf("coupon %s: %d %s", name, r.Status, r.Raw)
		}
		return str(r.Body, "id")
	}
	revised, rejected, approved := coupon("revised", 15), coupon("rejected", 50), coupon("approved", 5)

	b := newBrowser(t, s, idp, 1366, 900)
	b.run("turning scripts off", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	// Ben signs in once, so that the desk knows him as someone to assign to.
	b.signIn(idp, ben, "/desk")
	if eval[bool](b, `typeof window.htmx !== "undefined"`) {
		t.Fatal("scripts still run")
	}
	b.signOut()
	b.signIn(idp, ann, "/desk/queue")
	row := func(id, testid string) chromedp.CSS {
		return chromedp.CSS(`[data-id="` + id + `"] [data-testid="` + testid + `"]`)
	}
	onItem := func(id, form string) {
		b.run("opening "+form, chromedp.Navigate(s.URL+"/desk/operations/"+id), chromedp.WaitReady(sel("form-"+form)),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('[data-testid="action-`+form+`"]')?.removeAttribute("open")`),
			chromedp.Click(chromedp.CSS(`[data-testid="action-`+form+`"] > summary`)), chromedp.WaitVisible(sel("submit-"+form)))
	}
	// recorded waits for the plain form's round trip: the item's page says
	// the decision was recorded.
	recorded := func(what string) { b.run(what+" recorded", chromedp.WaitVisible(sel("decision-recorded"))) }

	// The queue's rows.
	b.run("taking an item", chromedp.WaitVisible(sel("queue-table")), chromedp.Click(row(take, "row-take")),
		chromedp.WaitNotPresent(row(take, "row-take")))
	// The Take button is gone as soon as the old page unloads; a node found
	// on the page the redirect shows before it has loaded may be replaced
	// under the next click. Wait for that page to have loaded.
	b.waitFor("the queue after the take", `document.readyState === "complete" &&
		document.querySelector('[data-id="`+rowAssign+`"] [data-testid="row-assignee"]') !== null &&
		document.querySelector('[data-id="`+take+`"] [data-testid="row-take"]') === null`)
	b.run("assigning a row", chromedp.Click(chromedp.CSS(`[data-id="`+rowAssign+`"] [data-testid="row-assignee"] details > summary`)),
		chromedp.SendKeys(row(rowAssign, "row-assignee-input"), ben.Email),
		chromedp.SendKeys(row(rowAssign, "row-assign-reason"), "Ben owns the CRM"),
		chromedp.Click(row(rowAssign, "row-assign-submit")))
	b.waitFor("the row assigned", `(document.querySelector('[data-id="`+rowAssign+`"] [data-testid="row-assignee"] > span') || {}).textContent === "`+ben.Email+`"`)

	// An item's decisions.
	onItem(executed, "confirm-executed")
	b.run("confirming executed", chromedp.SendKeys(sel("result-ref-input"), "crm_task_1"),
		chromedp.SendKeys(sel("reason-confirm-executed"), "found it in the CRM"), chromedp.Click(sel("submit-confirm-executed")))
	recorded("confirm executed")
	for id, then := range map[string]string{notRetry: "retry", notCancel: "cancel"} {
		onItem(id, "confirm-not-executed")
		acts := []chromedp.Action[chromedp.Void]{
			chromedp.Click(chromedp.CSS(`[data-testid="form-confirm-not-executed"] input[name="then"][value="` + then + `"]`)),
			chromedp.SendKeys(sel("reason-confirm-not-executed"), "the CRM has no such task; "+then),
		}
		if then == "retry" && eval[bool](b, `!!document.querySelector('[data-testid="confirm-risk-confirm-not-executed"]')`) {
			// the CRM does not deduplicate: the risk is confirmed
			acts = append(acts, chromedp.Click(sel("confirm-risk-confirm-not-executed")))
		}
		b.run("confirming not executed, then "+then, append(acts, chromedp.Click(sel("submit-confirm-not-executed")))...)
		recorded("confirm not executed, then " + then)
	}
	onItem(cancel, "cancel")
	b.run("cancelling", chromedp.SendKeys(sel("reason-cancel"), "the customer left"), chromedp.Click(sel("submit-cancel")))
	recorded("cancel")
	onItem(retry, "retry")
	b.run("retrying", chromedp.SendKeys(sel("reason-retry"), "owner recreated"), chromedp.Click(sel("submit-retry")))
	recorded("retry")
	onItem(resend, "resend-same-key")
	b.run("re-sending", chromedp.SendKeys(sel("reason-resend-same-key"), "the texter deduplicates by key"),
		chromedp.Click(sel("submit-resend-same-key")))
	recorded("re-send")
	onItem(assign, "assign")
	bens := eval[string](b, `[...document.querySelectorAll('[data-testid="assignee-select"] option')].find(o => o.textContent.includes("`+ben.Email+`")).value`)
	b.run("assigning", chromedp.SetValue(sel("assignee-select"), bens),
		chromedp.SendKeys(sel("reason-assign"), "Ben knows this customer"), chromedp.Click(sel("submit-assign")))
	recorded("assign")
	b.run("adding a note", chromedp.Navigate(s.URL+"/desk/operations/"+note), chromedp.WaitReady(sel("form-note")),
		chromedp.Click(chromedp.CSS(`details:has(> [data-testid="form-note"]) > summary`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="form-note"] textarea[name="text"]`), "called the customer, no answer"),
		chromedp.Click(chromedp.CSS(`[data-testid="form-note"] button[type="submit"]`)))
	recorded("note")
	onItem(revised, "revise")
	b.run("revising", chromedp.Clear(chromedp.CSS(`[data-testid="form-revise"] textarea[name="content"]`)),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="form-revise"] textarea[name="content"]`), `{"customer":"c_revised","percent":10}`),
		chromedp.SendKeys(sel("reason-revise"), "15% was a typo"), chromedp.Click(sel("submit-revise")))
	recorded("revise")
	b.run("looking up", chromedp.Navigate(s.URL+"/desk/operations/"+looked), chromedp.WaitVisible(sel("submit-lookup")),
		chromedp.Click(sel("submit-lookup")))
	recorded("look up")

	// Bulk decisions: on the rows selected, and on every row a filter matches.
	b.run("selecting two rows", chromedp.Navigate(s.URL+"/desk/queue"), chromedp.WaitVisible(sel("queue-table")),
		chromedp.Click(row(selected[0], "row-select")), chromedp.Click(row(selected[1], "row-select")),
		chromedp.Click(chromedp.CSS(`[data-testid="bulk"] > summary`)),
		chromedp.SetValue(chromedp.CSS(`[data-testid="bulk-selected"] [data-testid="bulk-decision"]`), "cancel"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="bulk-selected"] [data-testid="bulk-reason"]`), "the campaign was withdrawn"),
		chromedp.Click(chromedp.CSS(`[data-testid="bulk-selected"] [data-testid="bulk-preview"]`)),
		chromedp.WaitVisible(sel("batch-apply")), chromedp.Click(sel("batch-apply")), chromedp.WaitVisible(sel("batch-id")))
	b.run("filtering", chromedp.Navigate(s.URL+"/desk/queue"), chromedp.WaitVisible(sel("queue-search")),
		chromedp.SendKeys(sel("queue-search"), "evt_nj_all"),
		chromedp.Click(chromedp.CSS(`[data-testid="queue-filter"] button[type="submit"]`)),
		chromedp.WaitNotPresent(row(take, "row-assignee")))
	// The old page's rows are gone as soon as it unloads: count the
	// filtered page's, once it has loaded.
	b.waitFor("the filtered queue", `new URLSearchParams(location.search).get("q") === "evt_nj_all" &&
		document.readyState === "complete" && document.querySelector('[data-testid="queue-table"]') !== null`)
	if n := eval[int](b, `document.querySelectorAll('[data-testid="queue-row"]').length`); n != len(matching) {
		t.Fatalf("the filter shows %d rows, want %d", n, len(matching))
	}
	b.run("assigning every matching row", chromedp.Click(chromedp.CSS(`[data-testid="bulk"] > summary`)),
		chromedp.Click(sel("bulk-all")), // select all N matching, outside the form (form="bulk-selected")
		chromedp.SetValue(chromedp.CSS(`[data-testid="bulk-selected"] [data-testid="bulk-decision"]`), "assign"),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="bulk-selected"] [data-testid="bulk-assignee"]`), ben.Email),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="bulk-selected"] [data-testid="bulk-reason"]`), "Ben runs this campaign"),
		chromedp.Click(chromedp.CSS(`[data-testid="bulk-selected"] [data-testid="bulk-preview"]`)),
		chromedp.WaitVisible(sel("batch-apply")), chromedp.Click(sel("batch-apply")), chromedp.WaitVisible(sel("batch-id")))
	b.signOut()

	// The approver: approve on the item, reject and approve on Approvals.
	b.signIn(idp, ben, "/desk/operations/"+revised)
	b.run("approving the revision", chromedp.WaitVisible(sel("submit-approve")),
		chromedp.SendKeys(sel("reason-approve"), "10% matches the brief"), chromedp.Click(sel("submit-approve")))
	recorded("approve")
	onApprovals := func(id, kind, reason string) {
		item := `[data-testid="approval-item"][data-id="` + id + `"] `
		b.run(kind+" on Approvals", chromedp.Navigate(s.URL+"/desk/approvals"), chromedp.WaitVisible(chromedp.CSS(item+`[data-testid="reason-`+kind+`"]`)),
			chromedp.SendKeys(chromedp.CSS(item+`[data-testid="reason-`+kind+`"]`), reason),
			chromedp.Click(chromedp.CSS(item+`[data-testid="submit-`+kind+`"]`)),
			chromedp.WaitNotPresent(chromedp.CSS(item+`[data-testid="submit-`+kind+`"]`)))
	}
	onApprovals(rejected, "reject", "50% is not a coupon we give")
	onApprovals(approved, "approve", "5% is the standard")
	b.signOut()

	// The admin sends an undelivered notification again.
	b.signIn(idp, adm, "/desk/notifications")
	b.run("sending a notification again", chromedp.WaitVisible(sel("resend-form")),
		chromedp.SendKeys(chromedp.CSS(`[data-testid="resend-form"] input[name="reason"]`), "the receiver is back"),
		chromedp.Click(chromedp.CSS(`[data-testid="resend-form"] button[type="submit"]`)))
	b.waitFor("the page saying it was sent again", `location.search.includes("resent=")`)
	resent := eval[string](b, `new URLSearchParams(location.search).get("resent")`)

	// What the ledger holds.
	want := func(id, state, action, by string) domain.Operation {
		t.Helper()
		op, _, err := led.Load(context.Background(), "", id)
		if err != nil {
			t.Fatalf("loading %s: %v", id, err)
		}
		if op.State.String() != state {
			t.Errorf("%s (%s) is %s, want %s", op.Key, action, op.State, state)
		}
		if e := led.lastBy(t, id, by); e.Action != action {
			t.Errorf("%s: %s's last event is %q, want %q", op.Key, by, e.Action, action)
		}
		return op
	}
	if op := want(take, "unknown_outcome", "assigned", ann.Email); op.AssigneeSubject != ann.Subject {
		t.Errorf("Take: assigned to %q", op.Assignee)
	}
	if op := want(rowAssign, "failed_terminal", "assigned", ann.Email); op.AssigneeSubject != ben.Subject {
		t.Errorf("the row's Assign: assigned to %q", op.Assignee)
	}
	if op := want(executed, "completed", "resolved", ann.Email); op.Result == nil || op.Result.Ref != "crm_task_1" ||
		op.Resolution == nil || op.Resolution.Action != "confirm_executed" {
		t.Errorf("confirm executed: result %+v, resolution %+v", op.Result, op.Resolution)
	}
	if op := want(notRetry, "received", "resolved", ann.Email); op.Resolution == nil || op.Resolution.Action != "confirm_not_executed+retry" {
		t.Errorf("confirm not executed, then retry: resolution %+v", op.Resolution)
	}
	if op := want(notCancel, "cancelled", "resolved", ann.Email); op.Resolution == nil || op.Resolution.Action != "confirm_not_executed+cancel" {
		t.Errorf("confirm not executed, then cancel: resolution %+v", op.Resolution)
	}
	if op := want(cancel, "cancelled", "resolved", ann.Email); op.Resolution == nil || op.Resolution.Action != "cancel" {
		t.Errorf("cancel: resolution %+v", op.Resolution)
	}
	if op := want(retry, "received", "resolved", ann.Email); op.Resolution == nil || op.Resolution.Action != "retry" {
		t.Errorf("retry: resolution %+v", op.Resolution)
	}
	if op := want(resend, "failed_retryable", "resolved", ann.Email); op.Resolution == nil || op.Resolution.Action != "resend_same_key" {
		t.Errorf("re-send: resolution %+v", op.Resolution)
	}
	if op := want(assign, "failed_terminal", "assigned", ann.Email); op.AssigneeSubject != ben.Subject {
		t.Errorf("assign: assigned to %q", op.Assignee)
	}
	want(note, "failed_terminal", "noted", ann.Email)
	if e := led.lastBy(t, note, ann.Email); e.Reason != "called the customer, no answer" {
		t.Errorf("the note reads %q", e.Reason)
	}
	want(looked, "unknown_outcome", domain.ActionLookupRun, ann.Email)
	for _, id := range selected {
		want(id, "cancelled", "resolved", ann.Email)
	}
	for _, id := range matching {
		if op := want(id, "failed_terminal", "assigned", ann.Email); op.AssigneeSubject != ben.Subject {
			t.Errorf("the bulk assign: %s assigned to %q", op.Key, op.Assignee)
		}
	}
	if op := want(revised, "received", "approved", ben.Email); op.ContentVersion != 2 || !strings.Contains(string(op.Content), `"percent":10`) ||
		op.Approval == nil || op.Approval.ContentVersion != 2 {
		t.Errorf("the revision: version %d %s, approval %+v", op.ContentVersion, op.Content, op.Approval)
	}
	if e := led.lastBy(t, revised, ann.Email); e.Action != "revised" {
		t.Errorf("Ann's last event on the revised coupon is %q, want revised", e.Action)
	}
	want(rejected, "cancelled", "rejected", ben.Email)
	want(approved, "received", "approved", ben.Email)
	var resends []string
	err = led.EachAudit(context.Background(), domain.AuditSelect{AuditQuery: domain.AuditQuery{Action: "notification_resent"}, WithSystem: true},
		func(e domain.AuditEvent) error {
			var d struct {
				ID string `json:"notification_id"`
			}
			_ = json.Unmarshal(e.Detail, &d)
			resends = append(resends, e.Actor.Email+" "+d.ID+" "+e.Reason)
			return nil
		})
	if err != nil || !slices.Equal(resends, []string{adm.Email + " " + resent + " the receiver is back"}) {
		t.Errorf("the trail's resends: %q (%v)", resends, err)
	}
	b.clean()
}

// ledger is the server's own database, read in the test's process.
type ledger struct{ *store.Store }

// ledgerStore opens the database the server runs on.
func (s *server) ledgerStore(t *testing.T) ledger {
	t.Helper()
	var url string
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "HANDOFF_DATABASE_URL="); ok {
			url = v
		}
	}
	st, err := store.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return ledger{st}
}

// lastBy is the operation's last audit event by the person.
func (l ledger) lastBy(t *testing.T, id, email string) domain.AuditEvent {
	t.Helper()
	events, err := l.Timeline(context.Background(), id)
	if err != nil {
		t.Fatalf("the timeline of %s: %v", id, err)
	}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Actor.Email == email {
			return events[i]
		}
	}
	return domain.AuditEvent{}
}

// unknownAfterBegin registers an operation whose only attempt timed out
// after it began: an unknown outcome.
func (s *server) unknownAfterBegin(t *testing.T, key, typ string, content map[string]any) string {
	t.Helper()
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": key, "type": typ, "event_id": strings.Split(key, ":")[0],
		"content": content, "claim": map[string]any{"worker": "w-1"}})
	if r.Status != 201 {
		t.Fatalf("register %s: %d %s", key, r.Status, r.Raw)
	}
	id, token := str(r.Body, "id"), num(r.Body, "claim", "lease", "token")
	if b := s.do(t, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": token}); b.Status != 200 {
		t.Fatalf("begin %s: %d %s", key, b.Status, b.Raw)
	}
	settled := s.do(t, "POST", "/v1/operations/"+id+"/settle", map[string]any{"lease_token": token, "outcome": "unknown_outcome",
		"error": map[string]any{"class": "timeout", "message": "read timeout"}})
	if settled.Status != 200 || str(settled.Body, "state") != "unknown_outcome" {
		t.Fatalf("settle %s: %d %s", key, settled.Status, settled.Raw)
	}
	return id
}
