package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDesk_NULAndBadUnicode: the desk never answers 500 for NUL or invalid
// UTF-8 in a path ID (404), a form field or a filter (the field is named).
func TestDesk_NULAndBadUnicode(t *testing.T) {
	d := newDesk(t)
	for _, p := range []string{"/desk/operations/op_%00", "/desk/operations/op_%ffx"} {
		d.get("ada", p).want(http.StatusNotFound)
	}
	d.post("ada", "/desk/operations/op_%00/notes", url.Values{"text": {"x"}, "expected_version": {"1"}}).want(http.StatusNotFound)

	op := d.intoDesk("evt_1:crm_task", true)
	base := "/desk/operations/" + op.ID
	for _, c := range []struct {
		path  string
		form  url.Values
		field string
	}{
		{"/notes", url.Values{"form": {"note"}, "text": {"a\x00b"}}, "text"},
		{"/assign", url.Values{"form": {"assign"}, "assignee": {"bob\x00"}, "reason": {"taking it"}}, "assignee"},
		{"/resolve", url.Values{"form": {"confirm-executed"}, "action": {"confirm_executed"}, "result_ref": {"crm\x00"},
			"reason": {"found it"}}, "result.ref"},
		{"/resolve", url.Values{"form": {"confirm-executed"}, "action": {"confirm_executed"}, "result_ref": {"crm_1"},
			"reason": {"found \x00 it"}}, "reason"},
	} {
		c.form.Set("expected_version", version(op))
		p := d.post("ada", base+c.path, c.form).refused(http.StatusUnprocessableEntity)
		if !strings.Contains(p.text("problem"), c.field) {
			t.Errorf("%s with NUL in %s: the refusal does not name the field\n%s", c.path, c.field, p.text("problem"))
		}
	}
	if got := d.state(op.ID); got.Version != op.Version {
		t.Fatalf("a refused form changed the operation: version %d, was %d", got.Version, op.Version)
	}

	for _, q := range []string{"q", "assignee", "namespace"} {
		p := d.get("ada", "/desk/queue?"+q+"=a%00b").want(http.StatusOK)
		if msg := p.text("queue-problem"); !strings.Contains(msg, q) {
			t.Errorf("queue filter %s with NUL: problem %q", q, msg)
		}
	}
	for _, q := range []string{"operation", "actor", "action"} {
		p := d.get("ada", "/desk/audit?"+q+"=a%00b").want(http.StatusOK)
		if msg := p.text("audit-problem"); msg == "" {
			t.Errorf("audit filter %s with NUL: no problem shown", q)
		}
	}
}

// TestDesk_DatabaseDown: with the database gone the desk answers 503 with
// Retry-After, never 500.
func TestDesk_DatabaseDown(t *testing.T) {
	d := newDesk(t)
	op := d.register("evt_1:crm_task", "crm.task.create")
	if err := d.store.Close(); err != nil {
		t.Fatal(err)
	}
	p := d.get("ada", "/desk/operations/"+op.ID).want(http.StatusServiceUnavailable)
	if p.header.Get("Retry-After") == "" {
		t.Fatalf("no Retry-After: %v", p.header)
	}
}
