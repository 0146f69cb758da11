package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// TestDesk_LiveQueueAndTimes: the navigation counts the desk; the queue's
// refresh waits while Ann has a row selected and brings in a new item once
// she has not; "Local" shows times in the browser's zone, named; disabled
// buttons look disabled.
func TestDesk_LiveQueueAndTimes(t *testing.T) {
	s, idp := deskServer(t)
	s.intoDesk(t, "evt_live1:crm_task", true)

	b := newBrowser(t, s, idp, 1366, 900)
	b.signIn(idp, ann, "/desk/queue")
	b.run("the queue", chromedp.WaitVisible(sel("queue-table")))
	if got := b.text(sel("nav-unknown")); got != "1 unknown" {
		t.Fatalf("nav count %q", got)
	}

	// poll runs the poller's request now, as its timer would, and waits
	// for it to end (or to be held off).
	poll := func() {
		eval[bool](b, `window.__polled = false; (function () { var p = document.querySelector('[data-poll]');
			htmx.ajax("GET", p.getAttribute("hx-get"), {source: p, target: "#queue-results"}).then(function () { window.__polled = true; }); return true; })()`)
		b.waitFor("the poll", `window.__polled === true && !document.querySelector('.htmx-request')`)
	}
	rows := `document.querySelectorAll('[data-testid="queue-row"]').length`
	b.run("selecting the row", chromedp.Click(sel("row-select")))
	s.intoDesk(t, "evt_live2:crm_task", true)
	poll()
	if n := eval[int](b, rows); n != 1 || !eval[bool](b, `document.querySelector('[data-testid="row-select"]').checked`) {
		t.Fatalf("a poll while a row was selected: %d rows, selection kept %v", n, eval[bool](b, `document.querySelector('[data-testid="row-select"]').checked`))
	}
	eval[bool](b, `(function () { var x = document.querySelector('[data-testid="row-select"]'); x.checked = false; x.blur(); return true; })()`)
	// The pointer is still on the row it clicked: a refresh now could swap
	// the row out from under a click.
	poll()
	if n := eval[int](b, rows); n != 1 {
		t.Fatalf("a poll while the pointer was on the queue shows %d rows", n)
	}
	b.run("moving the pointer off the queue", chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, 5, 5))
	poll()
	if n := eval[int](b, rows); n != 2 {
		t.Fatalf("after the selection was cleared and the pointer left, the poll shows %d rows", n)
	}

	// Local time, in Kolkata: UTC+5:30 and named.
	b.run("the zone", chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Kolkata"})
		return err
	}))
	b.run("the overview", chromedp.Navigate(s.URL+"/desk"), chromedp.WaitVisible(sel("time-local")))
	if got := b.text(chromedp.CSS(`main time`)); !strings.HasSuffix(got, " UTC") {
		t.Fatalf("the default is not UTC: %q", got)
	}
	b.run("choosing local time", chromedp.Click(sel("time-local")), chromedp.WaitVisible(chromedp.CSS(`main time[data-local="1"]`)))
	if loc := eval[string](b, `location.pathname`); loc != "/desk" {
		t.Fatalf("the choice returned to %s", loc)
	}
	got := b.text(chromedp.CSS(`main time`))
	if strings.HasSuffix(got, "UTC") || !(strings.Contains(got, "+5:30") || strings.Contains(got, "+05:30")) {
		t.Fatalf("local time %q does not name Kolkata's zone", got)
	}
	b.run("choosing UTC again", chromedp.Click(sel("time-utc")), chromedp.WaitVisible(chromedp.CSS(`[data-testid="time-utc"][aria-pressed="true"]`)))
	if got := b.text(chromedp.CSS(`main time`)); !strings.HasSuffix(got, " UTC") {
		t.Fatalf("back to UTC: %q", got)
	}

	// A disabled button of any kind looks unlike its enabled self.
	for _, class := range []string{"", "btn-reject", "small"} {
		style := eval[string](b, `(function () { var m = document.querySelector("main"), a = document.createElement("button");
			a.className = "`+class+`"; var d = a.cloneNode(); d.disabled = true; m.append(a, d);
			var s = getComputedStyle(a), t = getComputedStyle(d);
			var r = [s.backgroundColor, s.color, t.backgroundColor, t.color, t.cursor].join("|"); a.remove(); d.remove(); return r; })()`)
		p := strings.Split(style, "|")
		if p[0] == p[2] || p[1] == p[3] || p[4] != "not-allowed" {
			t.Fatalf("button %q: enabled %s/%s, disabled %s/%s, cursor %s", class, p[0], p[1], p[2], p[3], p[4])
		}
	}
	b.clean()
}
