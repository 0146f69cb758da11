package web

import (
	"net/http"
	"testing"
)

// TestDesk_QueueRefreshBringsNavCounts: the queue's refreshed fragment
// carries the navigation's counts, swapped out of band over the page's
// own, so they no longer stay as they were when the page loaded.
func TestDesk_QueueRefreshBringsNavCounts(t *testing.T) {
	d := newDesk(t)
	d.intoDesk("evt_nav1:crm_task", true)
	page := d.get("ada", "/desk/queue").want(http.StatusOK)
	id := attr(page.one("nav-desk-counts"), "id")
	if page.text("nav-unknown") != "1 unknown" || id == "" {
		t.Fatalf("the page's counts: %q, id %q", page.text("nav-unknown"), id)
	}
	d.intoDesk("evt_nav2:crm_task", true)
	d.intoDesk("evt_nav3:crm_task", false)
	f := d.get("ada", "/desk/queue", "HX-Request", "true").want(http.StatusOK).fragment()
	counts := f.one("nav-desk-counts")
	if attr(counts, "id") != id || attr(counts, "hx-swap-oob") != "true" || f.text("nav-unknown") != "2 unknown" || f.text("nav-failed") != "1 failed" {
		t.Fatalf("the refresh's counts: id %q oob %q, %q %q", attr(counts, "id"), attr(counts, "hx-swap-oob"), f.text("nav-unknown"), f.text("nav-failed"))
	}
}
