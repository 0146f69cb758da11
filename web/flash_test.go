package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestDesk_NoteDoesNotBlockADecision: Bob's note and assignment, made while
// Ada had the page open, leave her retry standing; Bob's retry makes her
// cancel stale, and the notice says Bob retried it, and when.
func TestDesk_NoteDoesNotBlockADecision(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", false)
	seen := version(op)
	ctx := context.Background()
	if _, err := d.ledger.Desk.AddNote(ctx, testPeople["bob"], op.ID, domain.Note{Text: "asked the CRM team"}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.ledger.Desk.Assign(ctx, testPeople["bob"], op.ID, domain.Assign{To: testPeople["bob"].Person(), Reason: "mine"}); err != nil {
		t.Fatal(err)
	}
	retry := url.Values{"form": {"retry"}, "action": {"retry"}, "expected_version": {seen}, "reason": {"owner fixed"}}
	d.post("ada", "/desk/operations/"+op.ID+"/resolve", retry).want(http.StatusSeeOther)
	if got := d.state(op.ID); got.State != domain.Received {
		t.Fatalf("Ada's retry after Bob's note: %s", got.State)
	}

	other := d.intoDesk("evt_2:crm_task", false)
	seen = version(other)
	if _, err := d.ledger.Desk.Resolve(ctx, testPeople["bob"], other.ID, domain.Resolve{Action: domain.ResolveRetry,
		Reason: "fixed", ExpectedVersion: other.Version}); err != nil {
		t.Fatal(err)
	}
	cancel := url.Values{"form": {"cancel"}, "action": {"cancel"}, "expected_version": {seen}, "reason": {"customer withdrew"}}
	p := d.post("ada", "/desk/operations/"+other.ID+"/resolve", cancel).refused(http.StatusConflict)
	got := p.text("conflict")
	for _, want := range []string{"changed since you loaded it, so nothing was recorded", "Bob Builder <bob@example.com> retried it",
		" ago (at ", " UTC)"} {
		if !strings.Contains(got, want) {
			t.Fatalf("the stale notice lacks %q: %q", want, got)
		}
	}
	p.none("form-cancel") // it is received now: nothing to cancel here
	if d.state(other.ID).State != domain.Received {
		t.Fatal("the stale cancel was applied")
	}
}

// TestDesk_ExpiredSessionKeepsTheDraft: a decision posted after the session
// expired is not recorded; sign-in is asked for with the operation as the
// way back, and there the typed fields are restored with a notice saying
// nothing was recorded.
func TestDesk_ExpiredSessionKeepsTheDraft(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	form := url.Values{"form": {"confirm-executed"}, "action": {"confirm_executed"}, "expected_version": {version(op)},
		"result_ref": {"crm_991"}, "reason": {"found crm_991 in the CRM after a long search"}}
	r := d.post("", "/desk/operations/"+op.ID+"/resolve", form).want(http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/auth/login?expired=1&next="+url.QueryEscape("/desk/operations/"+op.ID) {
		t.Fatalf("sent to %q", loc)
	}
	if d.state(op.ID).State != domain.UnknownOutcome {
		t.Fatal("a decision without a session was recorded")
	}
	var cookie string
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "handoff_flash" {
			cookie = c.Name + "=" + c.Value
		}
	}
	// Signed in again, back on the item: the draft and the notice.
	p := d.get("ada", "/desk/operations/"+op.ID, "Cookie", cookie).want(http.StatusOK)
	if got := p.text("session-expired"); !strings.Contains(got, "nothing was recorded") {
		t.Fatalf("notice: %q", got)
	}
	if attr(p.one("result-ref-input"), "value") != "crm_991" || text(p.one("reason-confirm-executed")) != "found crm_991 in the CRM after a long search" {
		t.Fatal("the typed fields were not restored")
	}
	// Another operation's page does not show it.
	other := d.intoDesk("evt_2:crm_task", true)
	d.get("ada", "/desk/operations/"+other.ID, "Cookie", cookie).want(http.StatusOK).none("session-expired")
	// A page that is no decision's target is sent to sign in as before.
	r = d.post("", "/desk/operations/"+op.ID+"/elsewhere", form)
	if strings.Contains(strings.Join(r.header.Values("Set-Cookie"), ";"), "handoff_flash") {
		t.Fatal("a flash for a POST that is no decision")
	}
}

// TestDesk_SuccessBannerAndNextItem: after a decision the operation says
// what was recorded and links to the next item of the queue.
func TestDesk_SuccessBannerAndNextItem(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", false)
	next := d.intoDesk("evt_2:crm_task", true)
	r := d.post("ada", "/desk/operations/"+op.ID+"/resolve", url.Values{"action": {"retry"}, "expected_version": {version(op)},
		"reason": {"owner fixed"}}).want(http.StatusSeeOther)
	var cookie string
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "handoff_flash" {
			cookie = c.Name + "=" + c.Value
		}
	}
	p := d.get("ada", r.header.Get("Location"), "Cookie", cookie).want(http.StatusOK)
	if got := p.text("decision-recorded"); !strings.Contains(got, "Recorded: retry.") {
		t.Fatalf("banner: %q", got)
	}
	if href := attr(p.one("next-item"), "href"); href != "/desk/operations/"+next.ID {
		t.Fatalf("next item: %q", href)
	}
	// Shown once.
	d.get("ada", r.header.Get("Location")).want(http.StatusOK).none("decision-recorded")
}

// TestDesk_JSONErrorLineAndColumn: revised content that is not JSON is
// refused with where it breaks, and what was typed is kept.
func TestDesk_JSONErrorLineAndColumn(t *testing.T) {
	if got := jsonSyntax("{\n  \"a\": 1,\n  \"b\": x\n}"); !strings.Contains(got, "line 3, column 8") {
		t.Fatalf("jsonSyntax: %q", got)
	}
	if jsonSyntax(`{"a": 1}`) != "" {
		t.Fatal("valid JSON refused")
	}
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", false)
	typed := "{\n  \"owner\": \"u_10\",\n  \"title\": oops\n}"
	p := d.post("ada", "/desk/operations/"+op.ID+"/revisions", url.Values{"form": {"revise"}, "expected_version": {version(op)},
		"content": {typed}, "reason": {"fix the owner"}}).refused(http.StatusUnprocessableEntity)
	if got := p.text("problem"); !strings.Contains(got, "content: is not valid JSON at line 3, column 12") {
		t.Fatalf("problem: %q", got)
	}
}

// TestDesk_AssignedElsewhereWarning: the decide form warns when someone else
// has taken the item.
func TestDesk_AssignedElsewhereWarning(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", false)
	if _, err := d.ledger.Desk.Assign(context.Background(), testPeople["bob"], op.ID, domain.Assign{To: testPeople["bob"].Person(), Reason: "mine"}); err != nil {
		t.Fatal(err)
	}
	if got := d.get("ada", "/desk/operations/"+op.ID).text("assigned-elsewhere"); !strings.Contains(got, "bob@example.com has taken this item") {
		t.Fatalf("warning: %q", got)
	}
	d.get("bob", "/desk/operations/"+op.ID).none("assigned-elsewhere")
}
