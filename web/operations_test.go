package web

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestDesk_OperationsPage: every state is listed and found — by the
// operation's ID, an attempt's ID and the content's text — while the
// queue keeps to the desk.
func TestDesk_OperationsPage(t *testing.T) {
	d := newDesk(t)
	fresh := d.register("evt_9:fresh", "crm.task.create") // received: never in the desk
	stuck := d.intoDesk("evt_1:a", true)
	atts, err := d.store.Attempts(context.Background(), stuck.ID)
	if err != nil || len(atts) == 0 {
		t.Fatal(err)
	}
	ids := func(p answer) map[string]bool {
		out := map[string]bool{}
		for _, r := range p.all("queue-row") {
			out[attr(r, "data-id")] = true
		}
		return out
	}
	d.indexSearch()
	all := ids(d.get("vic", "/desk/operations").want(http.StatusOK))
	if !all[fresh.ID] || !all[stuck.ID] {
		t.Fatalf("every state: %v", all)
	}
	if q := ids(d.get("vic", "/desk/queue")); q[fresh.ID] {
		t.Fatal("the queue lists a received operation")
	}
	for _, c := range []struct{ q, want string }{
		{fresh.ID, fresh.ID}, {atts[0].ID, stuck.ID}, {"FOLLOW UP", ""},
	} {
		got := ids(d.get("vic", "/desk/operations?q="+url.QueryEscape(c.q)).want(http.StatusOK))
		if c.want == "" {
			if !got[fresh.ID] || !got[stuck.ID] {
				t.Fatalf("content text %q: %v", c.q, got)
			}
			continue
		}
		if len(got) != 1 || !got[c.want] {
			t.Fatalf("search %q: %v, want %s", c.q, got, c.want)
		}
	}
	got := ids(d.get("vic", "/desk/operations?state="+domain.Received.String()).want(http.StatusOK))
	if len(got) != 1 || !got[fresh.ID] {
		t.Fatalf("state filter: %v", got)
	}
	p := d.get("ada", "/desk/operations").want(http.StatusOK)
	p.none("row-take")
	if p.text("queue-filter") == "" {
		t.Fatal("no filter form")
	}
	d.get("vic", "/desk/operations?state=nonsense").want(http.StatusOK).one("queue-problem")
}
