package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

func TestDesk_Approvals(t *testing.T) {
	d := newDesk(t)
	d.get("ada", "/desk/approvals").want(http.StatusOK).one("approvals-empty")

	registered := d.register("evt_1:coupon", "coupon.issue")
	failed := d.intoDesk("evt_2:crm_task", false)
	rev := url.Values{"expected_version": {version(failed)}, "reason": {"owner u_9 left"},
		"content": {`{"owner":"u_10","title":"Follow up"}`}}
	d.post("ada", "/desk/operations/"+failed.ID+"/revisions", rev).want(http.StatusSeeOther)
	revised := d.state(failed.ID)

	// Ada sees her own revision, marked and not approvable.
	p := d.get("ada", "/desk/approvals").want(http.StatusOK)
	items := p.all("approval-item")
	// The newest first: the revision, made after the coupon was registered.
	if len(items) != 2 || attr(items[0], "data-id") != revised.ID || attr(items[1], "data-id") != registered.ID {
		t.Fatalf("%d items, the first %s", len(items), attr(items[0], "data-id"))
	}
	if !strings.Contains(text(items[1]), "The content as registered") || strings.Contains(text(items[1]), "You made this version") {
		t.Fatalf("registered item: %q", text(items[1]))
	}
	own := text(items[0])
	for _, want := range []string{"You made this version", `- "owner": "u_9",`, `+ "owner": "u_10",`, "by ada@example.com", "owner u_9 left"} {
		if !strings.Contains(own, want) {
			t.Fatalf("own revision lacks %q: %q", want, own)
		}
	}
	buttons := p.all("submit-approve")
	if len(buttons) != 2 || !hasAttr(buttons[0], "disabled") || hasAttr(buttons[1], "disabled") {
		t.Fatal("only the other's version may be approved by Ada")
	}
	approve := inputs(p.all("form-approve")[0])
	if approve.Get("content_version") != "2" || approve.Get("expected_version") != version(revised) || approve.Get("return") != "/desk/approvals" {
		t.Fatalf("approve form: %v", approve)
	}
	// Bob, through the htmx fragment, may decide on both.
	f := d.get("bob", "/desk/approvals", "HX-Request", "true").want(http.StatusOK).fragment()
	f.none("own-revision")
	for _, b := range f.all("submit-approve") {
		if hasAttr(b, "disabled") {
			t.Fatal("bob cannot approve ada's revision")
		}
	}
}

func TestDesk_ApproveOthersRefuseOwn(t *testing.T) {
	d := newDesk(t)
	failed := d.intoDesk("evt_2:crm_task", false)
	rev := url.Values{"expected_version": {version(failed)}, "reason": {"owner u_9 left"}, "content": {`{"owner":"u_10"}`}}
	d.post("ada", "/desk/operations/"+failed.ID+"/revisions", rev).want(http.StatusSeeOther)
	op := d.state(failed.ID)
	form := url.Values{"form": {"approve"}, "expected_version": {version(op)}, "content_version": {strconv.Itoa(op.ContentVersion)},
		"reason": {"looks right"}, "return": {"/desk/approvals"}}

	// Ada's own: the ledger refuses even when the disabled button is bypassed.
	p := d.post("ada", "/desk/operations/"+op.ID+"/approve", form).refused(http.StatusForbidden)
	if !strings.Contains(p.text("problem"), "someone else must decide") {
		t.Fatalf("own approval: %q", p.text("problem"))
	}
	d.post("ada", "/desk/operations/"+op.ID+"/reject", form).refused(http.StatusForbidden)
	// A viewer cannot either.
	d.post("vic", "/desk/operations/"+op.ID+"/approve", form).refused(http.StatusForbidden)

	r := d.post("bob", "/desk/operations/"+op.ID+"/approve", form).want(http.StatusSeeOther)
	if r.header.Get("Location") != "/desk/approvals" {
		t.Fatalf("redirect: %q", r.header.Get("Location"))
	}
	got := d.state(op.ID)
	if got.State != domain.Received || got.Approval == nil || got.Approval.By != "bob@example.com" {
		t.Fatalf("approved: %+v", got)
	}
	p = d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)
	if !strings.Contains(p.text("approved-by"), "bob@example.com") {
		t.Fatalf("approved by: %q", p.text("approved-by"))
	}
	// Approving again, with the version of the old page: stale.
	d.post("bob", "/desk/operations/"+op.ID+"/approve", form).refused(http.StatusConflict).one("conflict")
}

func TestDesk_Reject(t *testing.T) {
	d := newDesk(t)
	op := d.register("evt_1:coupon", "coupon.issue")
	form := url.Values{"form": {"reject"}, "expected_version": {version(op)}, "content_version": {"1"}}
	p := d.post("bob", "/desk/operations/"+op.ID+"/reject", form).refused(http.StatusUnprocessableEntity)
	if !strings.Contains(p.text("problem"), "reason") {
		t.Fatalf("no reason: %q", p.text("problem"))
	}
	form.Set("reason", "coupon value too high")
	d.post("bob", "/desk/operations/"+op.ID+"/reject", form).want(http.StatusSeeOther)
	if got := d.state(op.ID); got.State != domain.Cancelled {
		t.Fatalf("rejected: %s", got.State)
	}
}

// TestDesk_OwnRevisionFollowsSubject: Ada's revision stays hers on the desk
// after her provider changed her email — marked, not approvable, and
// refused if posted anyway.
func TestDesk_OwnRevisionFollowsSubject(t *testing.T) {
	d := newDesk(t)
	failed := d.intoDesk("evt_2:crm_task", false)
	rev := url.Values{"expected_version": {version(failed)}, "reason": {"owner u_9 left"}, "content": {`{"owner":"u_10"}`}}
	d.post("ada", "/desk/operations/"+failed.ID+"/revisions", rev).want(http.StatusSeeOther)
	revised := d.state(failed.ID)

	p := d.get("ada2", "/desk/approvals").want(http.StatusOK)
	if !strings.Contains(p.text("approval-item"), "You made this version") || !hasAttr(p.one("submit-approve"), "disabled") {
		t.Fatalf("ada's revision is not hers under a new email: %q", p.text("approval-item"))
	}
	form := url.Values{"expected_version": {version(revised)}, "content_version": {"2"}, "reason": {"fine"}}
	d.post("ada2", "/desk/operations/"+failed.ID+"/approve", form).refused(http.StatusForbidden)
	if got := d.state(failed.ID); got.State != domain.AwaitingApproval {
		t.Fatalf("state %s", got.State)
	}
}
