package web

import (
	"fmt"
	"net/http"
	"testing"
)

// TestDesk_QueueSaysItsTotal: the queue and the Operations page say how
// many items the filter matches on every page, not only on this one, and a
// later page links back to the first.
func TestDesk_QueueSaysItsTotal(t *testing.T) {
	d := newDesk(t)
	for i := range queuePageSize + 2 {
		d.intoDesk(fmt.Sprintf("evt_total%d:crm_task", i), i%2 == 0)
	}
	p := d.get("ada", "/desk/queue").want(http.StatusOK)
	if got := p.text("list-total"); got != "52 items match." {
		t.Fatalf("page 1 says %q", got)
	}
	p.none("first-page")
	p = d.get("ada", attr(p.one("next-page"), "href")).want(http.StatusOK)
	if got := p.text("list-total"); got != "52 items match." || len(p.all("queue-row")) != 2 || attr(p.one("first-page"), "href") != "/desk/queue" {
		t.Fatalf("page 2 says %q with %d rows, first page %q", got, len(p.all("queue-row")), attr(p.one("first-page"), "href"))
	}
	if got := d.get("ada", "/desk/queue?state=failed_terminal").want(http.StatusOK).text("list-total"); got != "26 items match." {
		t.Fatalf("one state says %q", got)
	}
	d.register("evt_total_received:crm_task", "crm.task.create")
	if got := d.get("ada", "/desk/operations?q=evt_total_received").want(http.StatusOK).text("list-total"); got != "1 operation matches." {
		t.Fatalf("the Operations page says %q", got)
	}
}

// TestDesk_OperationsTotalIsBounded: the Operations page counts its
// matches only so far, and says "more than" past it.
func TestDesk_OperationsTotalIsBounded(t *testing.T) {
	d := newDesk(t)
	for i := range 203 {
		d.register(fmt.Sprintf("evt_bound%d:crm_task", i), "crm.task.create")
	}
	if got := d.get("ada", "/desk/operations").want(http.StatusOK).text("list-total"); got != "More than 200 operations match." {
		t.Fatalf("the Operations page says %q", got)
	}
}
