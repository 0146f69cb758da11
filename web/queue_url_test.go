package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The filter form sends its empty fields too; the address htmx pushes and
// the one the queue's decisions return to carry only the fields in use.
// A filter that cannot be read says so, and not "Nothing matches" as well.
func TestDesk_QueueAddressAndBadFilter(t *testing.T) {
	d := newDesk(t)
	d.intoDesk("evt_1:crm_task", true)
	r := d.get("ada", "/desk/queue?q=&state=unknown_outcome&type=&provider=&age=&namespace=&assignee=").want(http.StatusOK)
	if got := r.header.Get("HX-Push-Url"); got != "/desk/queue?state=unknown_outcome" {
		t.Fatalf("pushed address %q", got)
	}
	if !strings.Contains(r.body, `name="return" value="/desk/queue?state=unknown_outcome"`) {
		t.Fatal("the row's decisions return to the address with its empty fields")
	}
	if got := d.get("ada", "/desk/queue?state=unknown_outcome").want(http.StatusOK).header.Get("HX-Push-Url"); got != "" {
		t.Fatalf("a clean address is pushed again as %q", got)
	}

	bad := d.get("ada", "/desk/queue?age=soon").want(http.StatusOK)
	if !strings.Contains(bad.text("queue-problem"), "age") {
		t.Fatalf("bad age: %q", bad.text("queue-problem"))
	}
	bad.none("queue-empty")
}

// Take on an item someone else holds says whose it is: taking it is
// taking it from them, not a silent reassignment.
func TestDesk_TakeNamesTheCurrentAssignee(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	if got := d.get("ada", "/desk/queue").want(http.StatusOK).text("row-take"); got != "Take" {
		t.Fatalf("an unassigned item's button says %q", got)
	}
	take := url.Values{"take": {"1"}, "expected_version": {version(op)}}
	d.post("bob", "/desk/operations/"+op.ID+"/assign", take).want(http.StatusSeeOther)
	if got := d.get("ada", "/desk/queue").want(http.StatusOK).text("row-take"); !strings.HasPrefix(got, "Take from bob@") {
		t.Fatalf("Bob's item's button says %q", got)
	}
}
