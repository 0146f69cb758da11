package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/opshandoff/handoff/domain"
)

// Ada cancels an item as not executed; Bob, on a page loaded before, says
// it was executed and holds the provider's reference. His decision is
// refused as stale, but what he typed is kept beside Ada's, and he can
// record the contradiction: audited, the item flagged, the cancellation
// standing. A viewer cannot record one; a decision that agrees with the one
// taken is not a contradiction.
func TestDesk_StaleContradictionIsKeptAndRecorded(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	path := "/desk/operations/" + op.ID + "/resolve"
	cancel := url.Values{"form": {"confirm-not-executed"}, "action": {"confirm_not_executed"}, "then": {"cancel"},
		"expected_version": {version(op)}, "reason": {"no task in the CRM"}}
	d.post("ada", path, cancel).want(http.StatusSeeOther)

	executed := url.Values{"form": {"confirm-executed"}, "action": {"confirm_executed"}, "expected_version": {version(op)},
		"result_ref": {"ch_3PqX81"}, "reason": {"the charge is in the provider's dashboard"}}
	p := d.post("bob", path, executed).refused(http.StatusConflict)
	if got := p.text("conflict"); strings.Contains(got, "not kept") || !strings.Contains(got, "kept below") {
		t.Fatalf("the conflict says %q", got)
	}
	if got := p.text("kept-meanwhile"); !strings.Contains(got, "cancelled as not executed by ada@example.com") ||
		!strings.Contains(got, "no task in the CRM") {
		t.Fatalf("what happened meanwhile: %q", got)
	}
	if got := p.text("kept-typed"); !strings.Contains(got, "ch_3PqX81") {
		t.Fatalf("what Bob typed: %q", got)
	}
	if got := p.text("kept-reason"); !strings.Contains(got, "provider's dashboard") {
		t.Fatalf("Bob's reason: %q", got)
	}
	form := p.one("record-contradiction")
	fields := url.Values{}
	for _, in := range []string{"claim", "then", "result_ref", "form"} {
		fields.Set(in, inputValue(form, in))
	}
	if fields.Get("claim") != "confirm_executed" || fields.Get("result_ref") != "ch_3PqX81" {
		t.Fatalf("the form carries %v", fields)
	}
	fields.Set("reason", "the charge is in the provider's dashboard")
	contradiction := "/desk/operations/" + op.ID + "/contradiction"

	// A viewer sees the kept decision's page but cannot record it.
	d.post("vic", contradiction, fields).refused(http.StatusForbidden)
	// Without a reference, a claim of execution is refused.
	noRef := url.Values{"claim": {"confirm_executed"}, "reason": {"x"}, "form": {"contradiction"}}
	d.post("bob", contradiction, noRef).refused(http.StatusUnprocessableEntity)
	// Agreeing with the decision taken is no contradiction.
	agree := url.Values{"claim": {"confirm_not_executed"}, "then": {"cancel"}, "reason": {"x"}, "form": {"contradiction"}}
	d.post("bob", contradiction, agree).refused(http.StatusConflict)
	if got := d.state(op.ID); got.Version != version2(op, 1) {
		t.Fatalf("refused contradictions changed the operation: version %d", got.Version)
	}

	d.post("bob", contradiction, fields).want(http.StatusSeeOther)
	got := d.state(op.ID)
	if got.State != domain.Cancelled || got.Resolution == nil || got.Resolution.By != "ada@example.com" {
		t.Fatalf("the contradiction changed the decision: %s %+v", got.State, got.Resolution)
	}
	page := d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)
	if flag := page.text("contradicted"); !strings.Contains(flag, "ch_3PqX81") || !strings.Contains(flag, "bob@example.com") {
		t.Fatalf("the flag says %q", flag)
	}
	events, err := d.store.Timeline(context.Background(), op.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := events[len(events)-1]
	if last.Action != domain.ActionContradictionRecorded || last.Actor.Email != "bob@example.com" ||
		!strings.Contains(string(last.Detail), `"result_ref":"ch_3PqX81"`) ||
		!strings.Contains(string(last.Detail), `"contradicts":"confirm_not_executed+cancel"`) {
		t.Fatalf("audit: %s by %s: %s", last.Action, last.Actor.Email, last.Detail)
	}
}

// version2 is op's version after n more changes.
func version2(op domain.Operation, n int64) int64 { return op.Version + n }

// inputValue is the value of the input named name inside n.
func inputValue(n *html.Node, name string) string {
	if n.Type == html.ElementNode && n.Data == "input" && attr(n, "name") == name {
		return attr(n, "value")
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if v := inputValue(c, name); v != "" {
			return v
		}
	}
	return ""
}
