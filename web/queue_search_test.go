package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDesk_QueueSearchPointsOnward: the queue's search of an operation ID
// names that operation, whatever its state, and every search offers the
// Operations page's wider one, which finds it.
func TestDesk_QueueSearchPointsOnward(t *testing.T) {
	d := newDesk(t)
	done := d.register("evt_onward:crm_task", "crm.task.create") // received: not on the desk
	desk := d.intoDesk("evt_onward2:crm_task", true)

	for _, op := range []struct{ id, key, state string }{{done.ID, done.Key, "received"}, {desk.ID, desk.Key, "unknown outcome"}} {
		p := d.get("ada", "/desk/queue?q="+url.QueryEscape(op.id)).want(http.StatusOK)
		found := p.one("queue-found")
		if got := text(found); !strings.Contains(got, op.key) || !strings.Contains(strings.ToLower(got), op.state) {
			t.Errorf("searching %s: %q", op.id, got)
		}
		wider := p.one("queue-wider")
		var href string
		for n := wider.FirstChild; n != nil; n = n.NextSibling {
			if n.Data == "a" {
				href = attr(n, "href")
			}
		}
		if href != "/desk/operations?q="+op.id {
			t.Fatalf("the wider search: %q", href)
		}
		rows := d.get("ada", href).want(http.StatusOK).all("queue-row")
		if len(rows) != 1 || attr(rows[0], "data-id") != op.id {
			t.Errorf("the Operations page's search of %s: %d rows", op.id, len(rows))
		}
	}
	p := d.get("ada", "/desk/queue?q=evt_onward").want(http.StatusOK)
	p.none("queue-found")
	p.one("queue-wider")
	d.get("ada", "/desk/queue").want(http.StatusOK).none("queue-wider")
}

// TestDesk_OperationsSaysAgeNotDeskTime: the Operations page lists every
// state, so its age column says how old an operation is, not how long it
// has been in the desk — which a completed one never was.
func TestDesk_OperationsSaysAgeNotDeskTime(t *testing.T) {
	d := newDesk(t)
	d.register("evt_age:crm_task", "crm.task.create")
	d.intoDesk("evt_age2:crm_task", true)
	ops := d.get("ada", "/desk/operations").want(http.StatusOK)
	if strings.Contains(ops.body, "In the desk for") || strings.Contains(ops.body, "in the desk since") || !strings.Contains(ops.body, ">Age</th>") {
		t.Fatal("the Operations page labels every operation's age as time in the desk")
	}
	if q := d.get("ada", "/desk/queue").want(http.StatusOK); !strings.Contains(q.body, "In the desk for") {
		t.Fatal("the queue no longer says how long its items have been in the desk")
	}
}
