package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A refused decision on an item that left the desk meanwhile does not
// promise "what you typed": the form it was typed in is no longer offered.
// (flash_test.go has a refusal that keeps the typing.)
func TestDesk_StaleRefusalSaysWhatIsKept(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	path := "/desk/operations/" + op.ID + "/resolve"
	form := url.Values{"form": {"confirm-executed"}, "action": {"confirm_executed"}, "expected_version": {version(op)},
		"result_ref": {"crm_123"}, "reason": {"found task crm_123 in the CRM"}}

	// Ada confirms it; Bob's form, loaded before, is refused, and the page says the
	// typing is not kept.
	d.post("ada", path, form).want(http.StatusSeeOther)
	form.Set("reason", "a second look")
	p := d.post("bob", path, form).refused(http.StatusConflict)
	if got := p.text("conflict"); strings.Contains(got, "with what you typed") || !strings.Contains(got, "not kept") {
		t.Fatalf("after the item left the desk, the conflict says %q", got)
	}
}
