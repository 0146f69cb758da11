package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestDesk_OverviewNumbersEqualTheirLists: on a known mix — desk items of
// both kinds, two decided by a person, a coupon awaiting approval — the
// overview's numbers are the mix's, and following each number's link opens
// a list whose total is that number. With its charts' numbers open, the
// overview passes the layout test's checks (no sideways scroll, no cell
// below its column's minimum, no duplicate id) at 1440, 390 and 360 px,
// and axe-core finds no violation.
func TestDesk_OverviewNumbersEqualTheirLists(t *testing.T) {
	s, idp := deskServer(t)
	var ids []string
	var versions []int64
	for i := range 6 {
		op := s.intoDesk(t, fmt.Sprintf("evt_ov%d:crm_task", i), i%2 == 0)
		ids, versions = append(ids, str(op, "id")), append(versions, num(op, "version"))
	}
	for _, i := range []int{1, 3} { // two failed ones cancelled by a person
		if r := s.call(t, idp.IDToken(t, lea), "POST", "/v1/operations/"+ids[i]+"/resolve", map[string]any{"action": "cancel",
			"reason": "customer gone", "expected_version": versions[i]}); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Raw)
		}
	}
	if r := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_ov9:coupon", "type": "coupon.issue", "event_id": "evt_ov9",
		"content": map[string]any{"customer": "c_7", "percent": 10, "valid_days": 30}}); r.Status != 201 {
		t.Fatalf("coupon: %d %s", r.Status, r.Raw)
	}

	b := newBrowser(t, s, idp, 1440, 900)
	b.signIn(idp, adm, "/desk")
	b.run("the overview", chromedp.Navigate(s.URL+"/desk"), chromedp.WaitVisible(sel("count-desk")))
	for id, want := range map[string]string{"count-desk": "4", "count-entered": "7", "count-resolved": "2", "count-approval": "1"} {
		if got := eval[string](b, `document.querySelector('[data-testid="`+id+`"]').dataset.figure`); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	figures := eval[[]string](b, `[...document.querySelectorAll('a[data-figure]')].map(a => a.dataset.figure + " " + a.getAttribute('href'))`)
	if len(figures) < 18 { // 4 headline numbers, 9 states, 5 age bands
		t.Fatalf("%d linked numbers on the overview: %q", len(figures), figures)
	}
	for _, f := range figures {
		n, href, _ := strings.Cut(f, " ")
		b.run("the overview", chromedp.Navigate(s.URL+"/desk"), chromedp.WaitVisible(sel("count-desk")))
		b.run("following "+href, chromedp.Click(chromedp.CSS(`a[data-figure][href="`+href+`"]`)),
			chromedp.WaitVisible(sel("list-total")))
		if got := eval[string](b, `location.pathname + location.search`); got != href {
			t.Fatalf("clicked %s, at %s", href, got)
		}
		if got := eval[string](b, `document.querySelector('[data-testid="list-total"]').dataset.total`); got != n {
			t.Errorf("%s lists %s items, the overview says %s", href, got, n)
		}
		if rows := eval[int](b, `document.querySelectorAll('[data-testid="queue-row"]').length`); n != "0" && strconv.Itoa(rows) != n {
			t.Errorf("%s shows %d rows for %s items", href, rows, n)
		}
	}

	axe := axeSource(t)
	for _, width := range []int64{1440, 390, 360} {
		b.run("the viewport", chromedp.EmulateViewport(width, 900), chromedp.Navigate(s.URL+"/desk"), chromedp.WaitVisible(sel("overview-chart")))
		b.run("opening the charts' numbers", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('details.chart-data').forEach(d => d.open = true)`))
		if got := eval[[]string](b, layoutProblems); len(got) > 0 { // desk_layout_test.go
			t.Errorf("the overview at %d px:\n  %s", width, strings.Join(got, "\n  "))
		}
		if w := eval[float64](b, `document.querySelector('[data-testid="overview-chart"] svg').getBoundingClientRect().width`); w < 300 {
			t.Errorf("the hourly chart is %.0f px wide at %d px", w, width)
		}
		b.axeCheck(fmt.Sprintf("the overview at %d px", width), axe)
	}
	b.clean()
}
