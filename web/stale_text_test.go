package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A refused decision on an item that left the desk meanwhile does not
// promise "what you typed" in a form that is no longer offered: it keeps
// the typing beside the decision taken meanwhile. Two decisions that agree
// offer nothing to record. (flash_test.go has a refusal that keeps the
// typing in its form; contradiction_test.go one that contradicts.)
func TestDesk_StaleRefusalSaysWhatIsKept(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	path := "/desk/operations/" + op.ID + "/resolve"
	form := url.Values{"form": {"confirm-executed"}, "action": {"confirm_executed"}, "expected_version": {version(op)},
		"result_ref": {"crm_123"}, "reason": {"found task crm_123 in the CRM"}}

	// Ada confirms it; Bob's form, loaded before, is refused, and the page
	// keeps his typing beside Ada's decision.
	d.post("ada", path, form).want(http.StatusSeeOther)
	form.Set("reason", "a second look")
	p := d.post("bob", path, form).refused(http.StatusConflict)
	if got := p.text("conflict"); strings.Contains(got, "with what you typed") || !strings.Contains(got, "kept below") {
		t.Fatalf("after the item left the desk, the conflict says %q", got)
	}
	if got := p.text("kept-meanwhile"); !strings.Contains(got, "confirmed executed by ada@example.com") {
		t.Fatalf("meanwhile: %q", got)
	}
	if got := p.text("kept-reason"); !strings.Contains(got, "a second look") {
		t.Fatalf("Bob's reason: %q", got)
	}
	p.none("record-contradiction")
}
