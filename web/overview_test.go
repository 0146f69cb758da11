package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/opshandoff/handoff/domain"
)

// mixItem is one operation of the overview's known mix; times are ago.
type mixItem struct {
	typ               string
	state             domain.State
	entered, resolved time.Duration
	assignee          string
}

// overviewMix: desk items of both types in every age band, decisions
// inside and outside the last day, items awaiting approval, one never
// handed to a person.
var overviewMix = []mixItem{
	{"crm.task.create", domain.UnknownOutcome, 20 * time.Minute, 0, ""},
	{"crm.task.create", domain.FailedTerminal, 40 * time.Minute, 0, "ada@example.com"},
	{"crm.task.create", domain.FailedTerminal, 3 * time.Hour, 0, "ada@example.com"},
	{"coupon.issue", domain.UnknownOutcome, 12 * time.Hour, 0, ""},
	{"crm.task.create", domain.FailedTerminal, 50 * time.Hour, 0, "vic@example.com"},
	{"coupon.issue", domain.FailedTerminal, 9 * 24 * time.Hour, 0, ""},
	{"crm.task.create", domain.Completed, 5 * time.Hour, 4 * time.Hour, ""},
	{"coupon.issue", domain.Cancelled, 30 * time.Hour, 26 * time.Hour, ""},
	{"crm.task.create", domain.Received, 2 * time.Hour, 90 * time.Minute, ""},
	{"coupon.issue", domain.AwaitingApproval, 2 * time.Hour, 0, ""},
	{"crm.task.create", domain.Completed, 0, 0, ""},
}

// loadMix writes the mix, each operation created a minute before it was
// handed to a person (or two days ago).
func (d *desk) loadMix(now time.Time) {
	d.t.Helper()
	var changes []domain.Change
	for i, m := range overviewMix {
		card, _ := d.ledger.Cards.Get(m.typ)
		created := now.Add(-48 * time.Hour)
		if m.entered > 0 {
			created = now.Add(-m.entered - time.Minute)
		}
		env := domain.Env{Card: card, Now: created, Actor: testWorkflow, NewID: d.ledger.IDs.New}
		ch, err := domain.NewOperation(domain.Registration{Namespace: "campaigns", Key: fmt.Sprintf("evt_mix%02d:op", i), Type: m.typ},
			[]byte(fmt.Sprintf(`{"n":%d}`, i)), false, env)
		if err != nil {
			d.t.Fatal(err)
		}
		op := &ch.Op
		op.State, op.Assignee, op.DeskEnteredAt = m.state, m.assignee, nil
		if m.entered > 0 {
			at := now.Add(-m.entered)
			op.DeskEnteredAt = &at
		}
		if m.resolved > 0 {
			op.Resolution = &domain.Resolution{Action: "retry", By: "ada@example.com", Reason: "r", At: now.Add(-m.resolved)}
		}
		changes = append(changes, ch)
	}
	if err := d.store.CreateBatch(context.Background(), changes); err != nil {
		d.t.Fatal(err)
	}
}

// figure is one of the overview's linked numbers: the link's address and
// the number it stands for.
type figure struct {
	href string
	n    int
}

func figures(p answer) []figure {
	var out []figure
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "a" {
			if v := attr(n, "data-figure"); v != "" {
				k, _ := strconv.Atoi(v)
				out = append(out, figure{attr(n, "href"), k})
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	return out
}

// TestDesk_OverviewFiguresEqualTheirLists: on a known mix, the overview's
// figures are exact, and each links to a list whose total is the figure —
// for every type and for one.
func TestDesk_OverviewFiguresEqualTheirLists(t *testing.T) {
	d := newDesk(t)
	now := time.Now().UTC()
	d.loadMix(now)
	d.intoDesk("evt_live:crm_task", true) // and one the ledger handed over just now

	p := d.get("ada", "/desk").want(http.StatusOK)
	for id, want := range map[string]string{"count-desk": "7", "count-entered": "8", "count-resolved": "2", "count-approval": "1"} {
		if got := attr(p.one(id), "data-figure"); got != want {
			t.Errorf("%s: %s, want %s", id, got, want)
		}
	}
	bands := []string{}
	for _, r := range p.all("band-row") {
		bands = append(bands, text(r))
	}
	if fmt.Sprint(bands) != "[under 1 h 3 1–6 h 1 6–24 h 1 1–7 days 1 over 7 days 1]" {
		t.Errorf("bands %q", bands)
	}
	if in, out := chartSum(p, "overview-chart", 1), chartSum(p, "overview-chart", 2); in != 8 || out != 2 {
		t.Errorf("the hourly chart adds up to %d and %d, want 8 and 2", in, out)
	}
	for _, path := range []string{"/desk", "/desk?type=coupon.issue"} {
		figs := figures(d.get("ada", path).want(http.StatusOK))
		if len(figs) < 4+len(domain.States)+len(domain.DeskAgeBands) {
			t.Fatalf("%s: %d linked figures: %v", path, len(figs), figs)
		}
		for _, f := range figs {
			list := d.get("ada", f.href).want(http.StatusOK)
			if got := attr(list.one("list-total"), "data-total"); got != strconv.Itoa(f.n) {
				t.Errorf("%s: %s lists %s items, the overview says %d", path, f.href, got, f.n)
			}
		}
	}
	// A type the cards do not know is a bad request, not an empty desk.
	d.get("ada", "/desk?type=nope").want(http.StatusUnprocessableEntity)
}

// TestDesk_ListWindowsRefuseBadInput: a window the list cannot read is
// named beside the form, and nothing is listed or counted as if it matched.
func TestDesk_ListWindowsRefuseBadInput(t *testing.T) {
	d := newDesk(t)
	d.intoDesk("evt_1:crm_task", true)
	for _, q := range []string{"within=soon", "entered=-1h", "resolved=0d"} {
		p := d.get("ada", "/desk/operations?"+q).want(http.StatusOK)
		field, _, _ := strings.Cut(q, "=")
		if got := p.text("queue-problem"); !strings.Contains(got, field) {
			t.Errorf("%s: problem %q", q, got)
		}
		p.none("list-total")
		p.none("queue-empty")
	}
	// A good one is kept in the form, where it can be cleared.
	p := d.get("ada", "/desk/queue?within=1h").want(http.StatusOK)
	if box := p.one("queue-within"); attr(box, "value") != "1h" || attr(p.one("list-total"), "data-total") != "1" {
		t.Fatalf("within: %v", box)
	}
}
