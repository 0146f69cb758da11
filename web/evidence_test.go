package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDesk_EvidenceFirst: the operation page opens with the provider key
// (with a copy button for it), the last error, the attempts and when the key
// was first sent; notes are pinned above the timeline.
func TestDesk_EvidenceFirst(t *testing.T) {
	d := newDesk(t)
	sent := d.intoDesk("evt_1:crm_task", true)
	d.post("ada", "/desk/operations/"+sent.ID+"/notes", url.Values{"text": {"asked the CRM team"}}).want(http.StatusSeeOther)
	p := d.get("bob", "/desk/operations/"+sent.ID).want(http.StatusOK)

	if got := p.text("evidence-provider-key"); got != sent.ProviderKey {
		t.Fatalf("provider key: %q, want %q", got, sent.ProviderKey)
	}
	if target := attr(p.one("copy-provider-key"), "data-copy"); attr(p.one("evidence-provider-key"), "id") != target || target == "" {
		t.Fatalf("the copy button copies %q", target)
	}
	if got := p.text("evidence-last-error"); !strings.Contains(got, "read timeout") {
		t.Fatalf("last error: %q", got)
	}
	if got := p.text("evidence-attempts"); got != "1" {
		t.Fatalf("attempts: %q", got)
	}
	first := p.one("evidence-first-sent")
	if sent.ProviderKeyFirstSentAt == nil || !strings.Contains(text(first), sent.ProviderKeyFirstSentAt.UTC().Format("2006-01-02 15:04")) {
		t.Fatalf("first sent: %q (%v)", text(first), sent.ProviderKeyFirstSentAt)
	}
	notes := p.all("note")
	if len(notes) != 1 || !strings.Contains(text(notes[0]), "asked the CRM team") || !strings.Contains(text(notes[0]), "ada@example.com") {
		t.Fatalf("notes: %d", len(notes))
	}
	// The evidence and the notes come before the decisions and the timeline.
	body := p.body
	order := []string{`data-testid="evidence"`, `data-testid="notes"`, `data-testid="actions"`, `id="timeline"`}
	for i := 1; i < len(order); i++ {
		if a, b := strings.Index(body, order[i-1]), strings.Index(body, order[i]); a < 0 || b < 0 || a > b {
			t.Fatalf("%s is not above %s", order[i-1], order[i])
		}
	}

	never := d.intoDesk("evt_2:crm_task", false)
	p = d.get("bob", "/desk/operations/"+never.ID).want(http.StatusOK)
	if got := p.text("evidence-first-sent"); !strings.Contains(got, "never") {
		t.Fatalf("first sent of a key never sent: %q", got)
	}
	p.none("notes")
}
