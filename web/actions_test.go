package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

func (d *desk) state(id string) domain.Operation {
	d.t.Helper()
	op, err := d.ledger.Desk.Get(context.Background(), testPeople["ada"], id)
	if err != nil {
		d.t.Fatal(err)
	}
	return op
}

func TestDesk_ConfirmExecuted(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	path := "/desk/operations/" + op.ID + "/resolve"
	form := url.Values{"form": {"confirm-executed"}, "action": {"confirm_executed"}, "expected_version": {version(op)},
		"result_ref": {"crm_123"}}

	// No reason: refused, the typed reference offered again.
	p := d.post("ada", path, form).refused(http.StatusUnprocessableEntity)
	if !strings.Contains(p.text("problem"), "reason") || attr(p.one("result-ref-input"), "value") != "crm_123" {
		t.Fatalf("problem %q", p.text("problem"))
	}
	// A viewer may not decide.
	form.Set("reason", "found task crm_123 in the CRM")
	d.post("vic", path, form).refused(http.StatusForbidden).one("problem")

	r := d.post("ada", path, form).want(http.StatusSeeOther)
	if r.header.Get("Location") != "/desk/operations/"+op.ID {
		t.Fatalf("redirect: %q", r.header.Get("Location"))
	}
	done := d.state(op.ID)
	if done.State != domain.Completed || done.Result == nil || done.Result.Ref != "crm_123" {
		t.Fatalf("after confirm: %+v", done)
	}
	p = d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)
	evs := p.all("timeline-event")
	last := text(evs[len(evs)-1])
	if !strings.Contains(last, "Ada Lovelace <ada@example.com>") || !strings.Contains(last, "found task crm_123 in the CRM") {
		t.Fatalf("timeline: %q", last)
	}
	if p.text("result-ref") != "crm_123" || !strings.Contains(p.text("op-resolution"), "confirm executed by ada@example.com") {
		t.Fatal("resolution not shown")
	}
	p.none("form-confirm-executed")
	d.get("ada", "/desk/queue").want(http.StatusOK).one("queue-empty")

	// The same form again, from a page loaded before: stale.
	p = d.post("bob", path, form).refused(http.StatusConflict)
	if !strings.Contains(p.text("conflict"), "This item changed since you loaded it") {
		t.Fatalf("conflict: %q", p.text("conflict"))
	}
	if attr(p.one("op-status").FirstChild, "data-state") != "completed" {
		t.Fatal("the conflict does not show the fresh state")
	}
}

func TestDesk_ConfirmNotExecutedThenRetry(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	form := url.Values{"form": {"confirm-not-executed"}, "action": {"confirm_not_executed"}, "expected_version": {version(op)},
		"reason": {"no task in the CRM"}}
	p := d.post("ada", "/desk/operations/"+op.ID+"/resolve", form).refused(http.StatusUnprocessableEntity)
	if !strings.Contains(p.text("problem"), "then") {
		t.Fatalf("without then: %q", p.text("problem"))
	}
	// The CRM does not deduplicate and the key was sent: the page asks for a
	// second confirmation that names the risk, and the retry needs it.
	form.Set("then", "retry")
	p = d.get("ada", "/desk/operations/"+op.ID)
	if got := text(p.one("confirm-risk-confirm-not-executed").Parent); !strings.Contains(got, "acme-crm does not deduplicate") ||
		!strings.Contains(got, "does it twice") {
		t.Fatalf("the second confirmation: %q", got)
	}
	p = d.post("ada", "/desk/operations/"+op.ID+"/resolve", form).refused(http.StatusUnprocessableEntity)
	if !strings.Contains(p.text("problem"), "confirm the risk") || d.state(op.ID).State != domain.UnknownOutcome {
		t.Fatalf("a retry without the second confirmation: %q", p.text("problem"))
	}
	form.Set("confirm_risk", "1")
	d.post("ada", "/desk/operations/"+op.ID+"/resolve", form).want(http.StatusSeeOther)
	if got := d.state(op.ID); got.State != domain.Received || got.ProviderKey != op.ProviderKey {
		t.Fatalf("after retry: %+v", got)
	}
}

func TestDesk_RetryAndCancel(t *testing.T) {
	d := newDesk(t)
	a := d.intoDesk("evt_1:crm_task", false)
	b := d.intoDesk("evt_2:crm_task", false)
	retry := url.Values{"action": {"retry"}, "expected_version": {version(a)}, "reason": {"owner fixed in the CRM"}}
	d.post("ada", "/desk/operations/"+a.ID+"/resolve", retry).want(http.StatusSeeOther)
	if got := d.state(a.ID); got.State != domain.Received {
		t.Fatalf("retried: %s", got.State)
	}
	cancel := url.Values{"action": {"cancel"}, "expected_version": {version(b)}, "reason": {"customer withdrew"}}
	d.post("ada", "/desk/operations/"+b.ID+"/resolve", cancel).want(http.StatusSeeOther)
	if got := d.state(b.ID); got.State != domain.Cancelled {
		t.Fatalf("cancelled: %s", got.State)
	}
	// Cancelling an unknown outcome is refused: confirm first.
	c := d.intoDesk("evt_3:crm_task", true)
	cancel.Set("expected_version", version(c))
	p := d.post("ada", "/desk/operations/"+c.ID+"/resolve", cancel).refused(http.StatusConflict)
	if !strings.Contains(p.text("problem"), "confirm whether the provider acted") {
		t.Fatalf("cancel unknown: %q", p.text("problem"))
	}
	// A form without the version seen is refused before the Ledger.
	cancel.Del("expected_version")
	d.post("ada", "/desk/operations/"+c.ID+"/resolve", cancel).refused(http.StatusUnprocessableEntity)
}

func TestDesk_NoteAndRevise(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", false)
	d.post("ada", "/desk/operations/"+op.ID+"/notes", url.Values{"form": {"note"}, "text": {""}}).refused(http.StatusUnprocessableEntity)
	d.post("ada", "/desk/operations/"+op.ID+"/notes", url.Values{"form": {"note"}, "text": {"asked the CRM team"}}).want(http.StatusSeeOther)
	op = d.state(op.ID)

	rev := url.Values{"form": {"revise"}, "expected_version": {version(op)}, "reason": {"owner u_9 left"}, "content": {`{"owner": "u_10",`}}
	p := d.post("ada", "/desk/operations/"+op.ID+"/revisions", rev).refused(http.StatusUnprocessableEntity)
	if !strings.Contains(p.body, `{&#34;owner&#34;: &#34;u_10&#34;,`) {
		t.Fatal("the bad content is not offered again")
	}
	rev.Set("content", `{"owner":"u_10","title":"Follow up"}`)
	d.post("ada", "/desk/operations/"+op.ID+"/revisions", rev).want(http.StatusSeeOther)
	p = d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)
	if attr(p.one("op-status").FirstChild, "data-state") != "awaiting_approval" || len(p.all("version")) != 2 {
		t.Fatalf("after revision: %q", p.text("op-status"))
	}
	diff := text(p.all("diff")[0])
	if !strings.Contains(diff, `- "owner": "u_9",`) || !strings.Contains(diff, `+ "owner": "u_10",`) {
		t.Fatalf("diff: %q", diff)
	}
	p.one("own-revision")
	if !hasAttr(p.one("submit-approve"), "disabled") {
		t.Fatal("one's own revision can be approved from the page")
	}
	if !strings.Contains(text(p.all("timeline-event")[len(p.all("timeline-event"))-2]), "asked the CRM team") {
		t.Fatal("the note is not in the timeline")
	}
}
