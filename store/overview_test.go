package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// scene is one operation of the overview's known scenario: times are ago.
type scene struct {
	name     string
	typ      string
	state    domain.State
	entered  time.Duration // 0: never handed to a person
	resolved time.Duration // 0: never decided by one
	assignee string
}

// overviewScene: desk items in every age band, decisions inside and
// outside the windows, one item back in the desk after a decision, one
// awaiting Handoff's lookup, one awaiting approval, one never in the desk.
var overviewScene = []scene{
	{"A", "crm.task.create", domain.UnknownOutcome, 30 * time.Minute, 0, ""},
	{"B", "crm.task.create", domain.FailedTerminal, 90 * time.Minute, 0, "ada@example.com"},
	{"C", "crm.task.create", domain.FailedTerminal, 5*time.Hour + 30*time.Minute, 0, ""},
	{"D", "crm.task.create", domain.UnknownOutcome, 10*time.Hour + 30*time.Minute, 0, ""},
	{"E", "crm.task.create", domain.FailedTerminal, 72*time.Hour + 30*time.Minute, 0, ""},
	{"F", "crm.task.create", domain.FailedTerminal, 10 * 24 * time.Hour, 0, ""},
	{"G", "coupon.issue", domain.UnknownOutcome, 0, 0, ""}, // awaiting the lookup
	{"X", "coupon.issue", domain.FailedTerminal, 20 * time.Minute, 0, ""},
	{"R1", "crm.task.create", domain.Completed, 2*time.Hour + 40*time.Minute, 2*time.Hour + 10*time.Minute, ""},   // stay 30m
	{"R2", "crm.task.create", domain.Cancelled, 26*time.Hour + 15*time.Minute, 20*time.Hour + 15*time.Minute, ""}, // 6h
	{"R3", "crm.task.create", domain.Completed, 5*24*time.Hour + 2*time.Hour, 5 * 24 * time.Hour, ""},             // 2h
	{"R4", "crm.task.create", domain.Completed, 40 * 24 * time.Hour, 35 * 24 * time.Hour, ""},                     // before the month
	{"R5", "crm.task.create", domain.FailedTerminal, 45 * time.Minute, 3*time.Hour + 10*time.Minute, ""},          // back since
	{"AP", "crm.task.create", domain.AwaitingApproval, 4*time.Hour + 15*time.Minute, 0, ""},
	{"N", "crm.task.create", domain.Received, 0, 0, ""},
}

// loadScene writes the scenario as of now, each operation created a
// minute before it entered the desk (or 11 days ago).
func loadScene(t *testing.T, s *store.Store, now time.Time) {
	t.Helper()
	l := domain.NewLedger(s, testCards())
	var changes []domain.Change
	for _, sc := range overviewScene {
		card, _ := l.Cards.Get(sc.typ)
		created := now.Add(-11 * 24 * time.Hour)
		if sc.entered > 0 {
			created = now.Add(-sc.entered - time.Minute)
		}
		env := domain.Env{Card: card, Now: created, Actor: wf, NewID: l.IDs.New}
		ch, err := domain.NewOperation(domain.Registration{Namespace: "campaigns", Key: "k-" + sc.name, Type: sc.typ},
			[]byte(`{"n":"`+sc.name+`"}`), false, env)
		if err != nil {
			t.Fatal(err)
		}
		op := &ch.Op
		op.State, op.Assignee, op.DeskEnteredAt = sc.state, sc.assignee, nil
		if sc.entered > 0 {
			at := now.Add(-sc.entered)
			op.DeskEnteredAt = &at
		}
		if sc.resolved > 0 {
			op.Resolution = &domain.Resolution{Action: "retry", By: "ada@example.com", Reason: "r", At: now.Add(-sc.resolved)}
		}
		changes = append(changes, ch)
	}
	if err := s.CreateBatch(context.Background(), changes); err != nil {
		t.Fatal(err)
	}
}

// TestOverview_KnownScenario: every figure of the overview, exactly, on
// either database; and each equals the count of the list that store.List
// gives for the filter the overview links it to.
func TestOverview_KnownScenario(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	now := time.Now().UTC()
	if !storetest.Postgres() {
		s.SetClock(func() time.Time { return now })
	}
	loadScene(t, s, now)
	q := domain.OverviewQuery{AwaitingLookupOf: []string{"coupon.issue"}, Bands: bands(), Hours: 24, Days: 30, Latest: 10}
	o, err := s.Overview(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	want := map[domain.State]int{domain.UnknownOutcome: 2, domain.FailedTerminal: 6, domain.Completed: 3,
		domain.Cancelled: 1, domain.AwaitingApproval: 1, domain.Received: 1}
	for st, n := range want {
		if o.ByState[st] != n {
			t.Errorf("%s: %d, want %d", st, o.ByState[st], n)
		}
	}
	if o.InDesk() != 8 || o.AwaitingLookup != 1 {
		t.Errorf("in the desk %d, awaiting the lookup %d; want 8 and 1", o.InDesk(), o.AwaitingLookup)
	}
	if !slices.Equal(o.AgeBands, []int{3, 2, 1, 1, 1}) {
		t.Errorf("age bands %v, want [3 2 1 1 1]", o.AgeBands)
	}
	hourly := func(field func(domain.Flow) int) map[int]int {
		m := map[int]int{}
		for i, f := range o.PerHour {
			if n := field(f); n > 0 {
				m[i] = n
			}
		}
		return m
	}
	if got, want := hourly(func(f domain.Flow) int { return f.Entered }), map[int]int{23: 3, 22: 1, 21: 1, 19: 1, 18: 1, 13: 1}; fmt.Sprint(got) != fmt.Sprint(want) || o.EnteredHours != 8 {
		t.Errorf("entered per hour %v (total %d), want %v (8)", got, o.EnteredHours, want)
	}
	if got, want := hourly(func(f domain.Flow) int { return f.Resolved }), map[int]int{21: 1, 20: 1, 3: 1}; fmt.Sprint(got) != fmt.Sprint(want) || o.ResolvedHours != 3 {
		t.Errorf("resolved per hour %v (total %d), want %v (3)", got, o.ResolvedHours, want)
	}
	if len(o.PerHour) != 24 || !o.PerHour[23].Start.Equal(o.Now.Add(-time.Hour)) {
		t.Errorf("%d hours, the last from %v (now %v)", len(o.PerHour), o.PerHour[23].Start, o.Now)
	}

	// Days: calendar days, UTC, the last of them today.
	start := now.Truncate(24*time.Hour).AddDate(0, 0, -29)
	day := func(ago time.Duration) int { return int(now.Add(-ago).Sub(start) / (24 * time.Hour)) }
	wantIn, wantOut := map[int]int{}, map[int]int{}
	for _, sc := range overviewScene {
		if sc.entered > 0 && day(sc.entered) >= 0 {
			wantIn[day(sc.entered)]++
		}
		if sc.resolved > 0 && day(sc.resolved) >= 0 {
			wantOut[day(sc.resolved)]++
		}
	}
	gotIn, gotOut := map[int]int{}, map[int]int{}
	for i, f := range o.PerDay {
		if f.Entered > 0 {
			gotIn[i] = f.Entered
		}
		if f.Resolved > 0 {
			gotOut[i] = f.Resolved
		}
	}
	if fmt.Sprint(gotIn) != fmt.Sprint(wantIn) || o.EnteredDays != 12 || fmt.Sprint(gotOut) != fmt.Sprint(wantOut) || o.ResolvedDays != 4 {
		t.Errorf("per day in %v (%d) out %v (%d); want %v (12) and %v (4)", gotIn, o.EnteredDays, gotOut, o.ResolvedDays, wantIn, wantOut)
	}
	if len(o.PerDay) != 30 || !o.PerDay[0].Start.Equal(start) {
		t.Errorf("%d days from %v, want 30 from %v", len(o.PerDay), o.PerDay[0].Start, start)
	}
	// Stays 30m, 2h, 6h (R5's decision ended an earlier stay): nearest rank.
	if o.P50 != 2*time.Hour || o.P90 != 6*time.Hour {
		t.Errorf("time to resolve p50 %v p90 %v, want 2h and 6h", o.P50, o.P90)
	}
	if d := o.PerDay[day(5*24*time.Hour)]; d.P50 != 2*time.Hour || d.P90 != 2*time.Hour {
		t.Errorf("five days ago: p50 %v p90 %v, want 2h", d.P50, d.P90)
	}
	if fmt.Sprint(o.ByAssignee) != "[{ 7} {ada@example.com 1}]" {
		t.Errorf("by assignee %v", o.ByAssignee)
	}
	if len(o.Latest) != 8 || o.Latest[0].Key != "k-X" || o.Latest[7].Key != "k-D" {
		t.Errorf("latest %+v", o.Latest)
	}
	if o.Oldest == nil || o.Oldest.Key != "k-F" {
		t.Errorf("oldest %+v, want k-F", o.Oldest)
	}

	// The lists the figures link to count the same.
	count := func(lq domain.ListQuery) int {
		lq.AwaitingLookupOf, lq.Limit = q.AwaitingLookupOf, 1000
		ops, _, err := s.List(ctx, lq)
		if err != nil {
			t.Fatal(err)
		}
		return len(ops)
	}
	lower := time.Time{}
	for i, b := range q.Bands {
		lq := domain.ListQuery{States: domain.DeskStates, InDeskBefore: lower}
		if b > 0 {
			lq.InDeskSince = now.Add(-b)
		}
		if n := count(lq); n != o.AgeBands[i] {
			t.Errorf("band %d: the queue lists %d, the overview counts %d", i, n, o.AgeBands[i])
		}
		lower = now.Add(-b)
	}
	for st, n := range o.ByState {
		if got := count(domain.ListQuery{States: []domain.State{st}}); got != n {
			t.Errorf("%s: the list has %d, the overview %d", st, got, n)
		}
	}
	if n := count(domain.ListQuery{EnteredSince: now.Add(-24 * time.Hour)}); n != o.EnteredHours {
		t.Errorf("entered: the list has %d, the overview %d", n, o.EnteredHours)
	}
	if n := count(domain.ListQuery{ResolvedSince: now.Add(-24 * time.Hour)}); n != o.ResolvedHours {
		t.Errorf("resolved: the list has %d, the overview %d", n, o.ResolvedHours)
	}

	// One type's figures.
	q.Type = "coupon.issue"
	c, err := s.Overview(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if c.InDesk() != 1 || c.AwaitingLookup != 1 || c.EnteredHours != 1 || c.ResolvedHours != 0 || !slices.Equal(c.AgeBands, []int{1, 0, 0, 0, 0}) {
		t.Errorf("coupon.issue: in the desk %d, awaiting %d, entered %d, resolved %d, bands %v", c.InDesk(), c.AwaitingLookup,
			c.EnteredHours, c.ResolvedHours, c.AgeBands)
	}
}

func bands() []time.Duration {
	out := make([]time.Duration, len(domain.DeskAgeBands))
	for i, b := range domain.DeskAgeBands {
		out[i] = b.Under
	}
	return out
}

// TestOverview_PeopleOnly: a workflow does not read the overview, and a
// type the cards do not know is a bad request.
func TestOverview_PeopleOnly(t *testing.T) {
	ctx := context.Background()
	l := domain.NewLedger(storetest.New(t), testCards())
	if _, err := l.Desk.Overview(ctx, wf, ""); domain.ErrorCode(err) != domain.EForbidden {
		t.Fatalf("a workflow reads the overview: %v", err)
	}
	if _, err := l.Desk.Overview(ctx, person, "nope"); domain.ErrorCode(err) != domain.EInvalid {
		t.Fatalf("an unknown type: %v", err)
	}
	if o, err := l.Desk.Overview(ctx, person, ""); err != nil || o.InDesk() != 0 || len(o.PerHour) != 24 || len(o.PerDay) != 30 {
		t.Fatalf("empty overview: %+v %v", o, err)
	}
}
