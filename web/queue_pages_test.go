package web

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// rowIDs are the operations a list page shows, in its order.
func (p answer) rowIDs() []string {
	var ids []string
	for _, n := range p.all("queue-row") {
		ids = append(ids, attr(n, "data-id"))
	}
	return ids
}

// TestDesk_ListsSortAndPageBack: in every order each page offers, three
// pages forwards and two back by "Previous page" show exactly the rows
// they showed forwards, the first page again without a previous one; an
// order the page does not offer is refused beside the form, nothing listed.
// The bulk form leaves the order out: select all matching takes the oldest.
func TestDesk_ListsSortAndPageBack(t *testing.T) {
	d := newDesk(t)
	var made []string
	var oldest domain.Operation
	for i := range 2*queuePageSize + 5 {
		op := d.intoDesk(fmt.Sprintf("evt_pages%d:crm_task", i), i%2 == 0)
		if i == 0 {
			oldest = op
		}
		made = append(made, op.ID)
	}
	// The oldest item changes last: "last change first" puts it first.
	take := url.Values{"take": {"1"}, "expected_version": {version(oldest)}}
	d.post("bob", "/desk/operations/"+oldest.ID+"/assign", take).want(http.StatusSeeOther)
	for _, c := range []struct {
		path, sort, first string
	}{
		{"/desk/queue", "", made[0]},
		{"/desk/queue", "newest", made[len(made)-1]},
		{"/desk/queue", "changed", made[0]},
		{"/desk/operations", "newest", made[len(made)-1]},
		{"/desk/operations", "oldest", made[0]},
	} {
		t.Run(strings.TrimPrefix(c.path, "/desk/")+"_"+c.sort, func(t *testing.T) {
			addr := c.path
			if c.sort != "" {
				addr += "?sort=" + c.sort
			}
			p := d.get("ada", addr).want(http.StatusOK)
			p.none("prev-page")
			if c.path == "/desk/queue" && inputs(p.one("bulk-selected")).Has("sort") {
				t.Fatal("the bulk form carries the order: select all matching takes the oldest, whatever the page shows")
			}
			var pages [][]string
			for i := range 3 {
				pages = append(pages, p.rowIDs())
				if i < 2 {
					p = d.get("ada", attr(p.one("next-page"), "href")).want(http.StatusOK)
				}
			}
			if pages[0][0] != c.first {
				t.Fatalf("the first row is %s, want %s", pages[0][0], c.first)
			}
			if got := slices.Concat(pages...); len(got) != len(made) || len(slices.Compact(slices.Sorted(slices.Values(got)))) != len(made) {
				t.Fatalf("three pages show %d rows, %d of them different; want each of %d once", len(got), len(slices.Compact(slices.Sorted(slices.Values(got)))), len(made))
			}
			for i := 1; i >= 0; i-- {
				href := attr(p.one("prev-page"), "href")
				if c.sort != "" && !strings.Contains(href, "sort="+c.sort) {
					t.Fatalf("the previous page %s leaves the order", href)
				}
				p = d.get("ada", href).want(http.StatusOK)
				if got := p.rowIDs(); !slices.Equal(got, pages[i]) {
					t.Fatalf("back to page %d: %v, want %v", i+1, got, pages[i])
				}
			}
			p.none("prev-page")
			p.none("first-page")
			if got := p.rowIDs(); !slices.Equal(pages[1], d.get("ada", attr(p.one("next-page"), "href")).want(http.StatusOK).rowIDs()) {
				t.Fatalf("forwards again from the first page: not page 2 (%d rows)", len(got))
			}
		})
	}
	for _, addr := range []string{"/desk/queue?sort=sideways", "/desk/operations?sort=changed"} {
		bad := d.get("ada", addr).want(http.StatusOK)
		if !strings.Contains(bad.text("queue-problem"), "sort") || len(bad.all("queue-row")) != 0 {
			t.Errorf("%s: %q with %d rows", addr, bad.text("queue-problem"), len(bad.all("queue-row")))
		}
		bad.none("queue-empty")
	}
}
