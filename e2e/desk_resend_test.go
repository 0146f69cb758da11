package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDesk_ResendSameKey: a text message whose only attempt timed out after
// begin lands on the desk while the provider still deduplicates its key (the
// system re-sends by itself only while attempts remain). The person sees the
// decision to re-send under the same provider key, first, with the time the
// key is deduplicated until; takes it with a reason; the worker claims it
// again under the same provider key; the timeline names the person. A CRM
// task, whose provider does not deduplicate, is not offered it.
func TestDesk_ResendSameKey(t *testing.T) {
	s, idp := deskServer(t)
	r := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_sms1:sms", "type": "sms.send", "event_id": "evt_sms1",
		"content": map[string]any{"to": "+15550100", "text": "Your order shipped"}, "claim": map[string]any{"worker": "w-1"}})
	if r.Status != 201 {
		t.Fatalf("register: %d %s", r.Status, r.Raw)
	}
	id, pk, token := str(r.Body, "id"), str(r.Body, "provider_key"), num(r.Body, "claim", "lease", "token")
	if b := s.do(t, "POST", "/v1/operations/"+id+"/begin", map[string]any{"lease_token": token}); b.Status != 200 {
		t.Fatalf("begin: %d %s", b.Status, b.Raw)
	}
	settled := s.do(t, "POST", "/v1/operations/"+id+"/settle", map[string]any{"lease_token": token, "outcome": "unknown_outcome",
		"error": map[string]any{"class": "timeout", "message": "read timeout"}})
	if settled.Status != 200 || str(settled.Body, "state") != "unknown_outcome" {
		t.Fatalf("settle: %d %s", settled.Status, settled.Raw)
	}
	op := s.do(t, "GET", "/v1/operations/"+id, nil).Body
	first, err := time.Parse(time.RFC3339Nano, str(op, "provider_key_first_sent_at"))
	if err != nil {
		t.Fatalf("provider_key_first_sent_at: %v (%v)", err, op)
	}
	until := first.Add(24 * time.Hour).UTC().Format("2006-01-02 15:04:05 UTC")
	crm := str(s.intoDesk(t, "evt_sms2:crm_task", true), "id")

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/operations/"+id)
	b.run("the re-send is offered", chromedp.WaitVisible(sel("form-resend-same-key")))
	offer := strings.Join(strings.Fields(b.text(chromedp.CSS(`[data-testid="action-resend-same-key"] summary`))), " ")
	if want := "Re-send under the same provider key (deduplicated by the provider until " + until + ")"; offer != want {
		t.Fatalf("the offer reads %q, want %q", offer, want)
	}
	if first := eval[string](b, `document.querySelector('[data-testid="actions"] details').dataset.testid`); first != "action-resend-same-key" {
		t.Fatalf("the first decision offered is %s", first)
	}
	b.run("re-sending", chromedp.SendKeys(sel("reason-resend-same-key"), "The texter deduplicates by key; re-send it"),
		chromedp.Click(sel("submit-resend-same-key")),
		chromedp.WaitVisible(chromedp.CSS(`[data-testid="op-status"] [data-state="failed_retryable"]`)))
	if got := b.text(sel("decision-recorded")); !strings.Contains(got, "re-send under the same provider key") {
		t.Fatalf("banner: %q", got)
	}
	last := b.lastTimelineEvent()
	for _, want := range []string{"resolved", "Ann Operator", "ann@example.com", "The texter deduplicates by key"} {
		if !strings.Contains(last, want) {
			t.Fatalf("the timeline's last event lacks %q: %q", want, last)
		}
	}
	c := s.do(t, "POST", "/v1/operations/"+id+"/claim", map[string]any{"worker": "w-2"})
	if c.Status != 200 || str(c.Body, "operation", "provider_key") != pk || str(c.Body, "operation", "state") != "processing" {
		t.Fatalf("claim after the re-send: %d %s", c.Status, c.Raw)
	}
	audit := s.do(t, "GET", "/v1/operations/"+id+"/timeline", nil)
	if audit.Status != 200 || !strings.Contains(string(audit.Raw), `"resend_same_key"`) || !strings.Contains(string(audit.Raw), "ann@example.com") {
		t.Fatalf("the audit trail does not show the person's re-send: %d %s", audit.Status, audit.Raw)
	}

	b.run("a CRM task", chromedp.Navigate(s.URL+"/desk/operations/"+crm), chromedp.WaitVisible(sel("form-confirm-executed")))
	if n := eval[int](b, `document.querySelectorAll('[data-testid="action-resend-same-key"]').length`); n != 0 {
		t.Fatal("a re-send is offered on a provider that does not deduplicate")
	}
	b.clean()
}
