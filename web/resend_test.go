package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"golang.org/x/net/html"
)

// withMailer adds a mailer that deduplicates by key for a day, with one
// attempt, so a doubtful send lands on the desk while the key is retained;
// and the same mailer for a type whose key it forgets at once.
func (d *desk) withMailer() {
	mail := testCards()["crm.task.create"]
	mail.Name, mail.Provider, mail.ProviderIdempotency, mail.ProviderKeyRetention = "mail.send", "mailer", domain.IdempotencyKey, 24*time.Hour
	mail.Retry.MaxAttempts = 1
	brief := mail
	brief.Name, brief.ProviderKeyRetention = "mail.brief", time.Microsecond
	d.ledger.Cards[mail.Name], d.ledger.Cards[brief.Name] = mail, brief
}

// unknownOf drives a new operation of typ to unknown_outcome: a timeout
// after begin on its only attempt.
func (d *desk) unknownOf(key, typ string) domain.Operation {
	d.t.Helper()
	ctx := context.Background()
	res, err := d.ledger.Workflow.Register(ctx, testWorkflow, domain.Registration{Key: key, Type: typ, EventID: strings.Split(key, ":")[0],
		Content: json.RawMessage(`{"to":"a@example.com","ref":"` + key + `"}`), Claim: &domain.Claim{Worker: "w1"}})
	if err != nil {
		d.t.Fatal(err)
	}
	tok := res.Claim.Lease.Token
	if _, err := d.ledger.Workflow.Begin(ctx, testWorkflow, res.Operation.ID, domain.Begin{LeaseToken: tok}); err != nil {
		d.t.Fatal(err)
	}
	op, err := d.ledger.Workflow.Settle(ctx, testWorkflow, res.Operation.ID, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}})
	if err != nil || op.State != domain.UnknownOutcome {
		d.t.Fatalf("%s: %s %v", key, op.State, err)
	}
	return op
}

// TestDesk_ResendSameKey: on an unknown outcome the provider still
// deduplicates, the desk offers re-sending it under the same provider key
// first and open, saying until when (in UTC, named), with a reason; taken,
// the item goes back to be retried and the timeline names the person. It is
// not offered where a re-send could act twice, nor to a viewer.
func TestDesk_ResendSameKey(t *testing.T) {
	d := newDesk(t)
	d.withMailer()
	op := d.unknownOf("evt_1:mail", "mail.send")
	page := "/desk/operations/" + op.ID
	p := d.get("ada", page).want(http.StatusOK)
	offer := p.one("action-resend-same-key")
	until := op.ProviderKeyFirstSentAt.Add(24 * time.Hour)
	want := "Re-send under the same provider key (deduplicated by the provider until " + components.UTCText(until) + ")"
	// text() separates the <time> element's text with a space.
	if got := strings.ReplaceAll(strings.Join(strings.Fields(text(offer.FirstChild)), " "), " )", ")"); got != want || !hasAttr(offer, "open") {
		t.Fatalf("the offer reads %q (open %v), want %q", got, hasAttr(offer, "open"), want)
	}
	if first := firstAction(p.one("actions")); first != offer {
		t.Fatalf("the first decision offered is %q, want the re-send", attr(first, "data-testid"))
	}
	if got := p.text("next-decision"); !strings.Contains(got, "Re-send it under the same provider key") {
		t.Fatalf("next decision: %q", got)
	}
	if hasAttr(p.one("action-confirm-executed"), "open") {
		t.Fatal("confirm executed is open too: the re-send is the primary decision")
	}

	form := inputs(p.one("form-resend-same-key"))
	if form.Get("action") != "resend_same_key" || form.Get("expected_version") != version(op) {
		t.Fatalf("the form posts %v", form)
	}
	path := page + "/resolve"
	p = d.post("ada", path, form).refused(http.StatusUnprocessableEntity) // no reason
	if !strings.Contains(p.text("problem"), "reason") {
		t.Fatalf("problem %q", p.text("problem"))
	}
	form.Set("reason", "the mailer dedups by key")
	d.post("vic", path, form).refused(http.StatusForbidden)
	r := d.post("ada", path, form).want(http.StatusSeeOther)
	var cookie string
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "handoff_flash" {
			cookie = c.Name + "=" + c.Value
		}
	}
	got := d.state(op.ID)
	if got.State != domain.FailedRetryable || got.ProviderKey != op.ProviderKey || got.LastError == nil ||
		got.LastError.Code != domain.CodeResendGuarded || got.Resolution == nil || got.Resolution.By != "ada@example.com" {
		t.Fatalf("after the re-send: %+v", got)
	}
	p = d.get("ada", page, "Cookie", cookie).want(http.StatusOK)
	if !strings.Contains(p.text("decision-recorded"), "re-send under the same provider key") {
		t.Fatalf("banner %q", p.text("decision-recorded"))
	}
	evs := p.all("timeline-event")
	if last := text(evs[len(evs)-1]); !strings.Contains(last, "Ada Lovelace <ada@example.com>") || !strings.Contains(last, "the mailer dedups by key") {
		t.Fatalf("timeline: %q", last)
	}
	p.none("action-resend-same-key")
	// The same form again, from the page loaded before: stale.
	d.post("bob", path, form).refused(http.StatusConflict).one("conflict")

	// Not offered where a re-send could act twice, nor to a viewer.
	crm := d.intoDesk("evt_2:crm_task", true)
	d.get("ada", "/desk/operations/"+crm.ID).want(http.StatusOK).none("action-resend-same-key")
	brief := d.unknownOf("evt_3:mail", "mail.brief")
	d.get("ada", "/desk/operations/"+brief.ID).want(http.StatusOK).none("action-resend-same-key")
	d.get("vic", "/desk/operations/"+d.unknownOf("evt_4:mail", "mail.send").ID).want(http.StatusOK).none("action-resend-same-key")
	// Posted anyway, the ledger refuses it and says why.
	p = d.post("ada", "/desk/operations/"+brief.ID+"/resolve", url.Values{"form": {"resend-same-key"}, "action": {"resend_same_key"},
		"expected_version": {version(brief)}, "reason": {"try"}}).refused(http.StatusConflict)
	if !strings.Contains(p.text("problem"), "left its retention window at") {
		t.Fatalf("refusal: %q", p.text("problem"))
	}
}

// firstAction is the first decision (details) of the actions section.
func firstAction(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "details" {
			return c
		}
		if f := firstAction(c); f != nil {
			return f
		}
	}
	return nil
}

// TestDesk_BulkResendSameKey: a bulk re-send previews each item and skips,
// with the reason, those the provider no longer deduplicates or never did;
// applied, it re-sends the others (the apply form carries only those).
func TestDesk_BulkResendSameKey(t *testing.T) {
	d := newDesk(t)
	d.withMailer()
	ok := d.unknownOf("evt_1:mail", "mail.send")
	gone := d.unknownOf("evt_2:mail", "mail.brief")
	crm := d.intoDesk("evt_3:crm_task", true)
	form := url.Values{"decision": {"resend_same_key"}, "reason": {"the mailer dedups by key"}}
	for _, op := range []domain.Operation{ok, gone, crm} {
		form.Add("item", op.ID+":"+version(op))
	}
	pre := d.post("ada", "/desk/batch/preview", form).want(http.StatusOK)
	if got := pre.text("batch-summary"); !strings.HasPrefix(got, "1 item will be decided, 2 skipped") {
		t.Fatalf("preview: %q", got)
	}
	why := map[string]string{ok.ID: "", gone.ID: "left its retention window at", crm.ID: "does not deduplicate by key"}
	for _, r := range pre.all("batch-row") {
		id := attr(r, "data-id")
		if w := why[id]; (w == "") != (attr(r, "data-outcome") != domain.BatchSkipped) || !strings.Contains(text(r), w) {
			t.Fatalf("row %s: %s %q", id, attr(r, "data-outcome"), text(r))
		}
	}
	r := d.post("ada", "/desk/batch", inputs(pre.one("batch-apply-form"))).want(http.StatusSeeOther)
	res := d.get("ada", r.header.Get("Location")).want(http.StatusOK)
	if got := res.text("batch-counts"); got != "1 applied, 0 skipped, 0 failed." {
		t.Fatalf("result: %q", got)
	}
	if got := d.state(ok.ID); got.State != domain.FailedRetryable || got.ProviderKey != ok.ProviderKey {
		t.Fatalf("the re-sent item: %s", got.State)
	}
	if d.state(gone.ID).State != domain.UnknownOutcome || d.state(crm.ID).State != domain.UnknownOutcome {
		t.Fatal("a skipped item changed")
	}
}
