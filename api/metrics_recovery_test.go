package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/notify"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store/storetest"
	"github.com/prometheus/client_golang/prometheus"
)

// scrape reads /metrics into series → value, the series written as in the
// exposition format: name{label="value",...} with labels sorted by name.
func scrape(t *testing.T, h http.Handler) map[string]float64 {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 200 {
		t.Fatalf("/metrics: %d %s", rec.Code, rec.Body)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

func onlyHandoff(m map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range m {
		if strings.HasPrefix(k, "handoff_") {
			out[k] = v
		}
	}
	return out
}

// TestRecoveryMetrics drives a known scenario — one operation completed by
// its worker, one lost after begin then taken and confirmed by a person,
// one left on the desk, one waiting for approval, every notification
// delivered — and asserts every recovery series after scraping /metrics. A
// second replica on the same database reports the same gauges.
func TestRecoveryMetrics(t *testing.T) {
	ctx := context.Background()
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer rx.Close()
	cards := contractCards()
	for name, c := range cards {
		c.NotifyURL = rx.URL
		cards[name] = c
	}
	st := storetest.New(t)
	clock := time.Now().UTC().Truncate(time.Microsecond)
	st.SetClock(func() time.Time { return clock })

	replica := func() (*domain.Ledger, http.Handler, *api.Recovery) {
		l := domain.NewLedger(st, cards)
		l.Now = func() time.Time { return clock }
		reg := prometheus.NewRegistry()
		rec, err := api.NewRecovery(reg, st)
		if err != nil {
			t.Fatal(err)
		}
		l.Observer, l.Workflow.Events = rec, rec
		e, err := api.New(api.Config{Ledger: l, Auth: auth.Chain{}, Registry: reg, Ready: st.Ping})
		if err != nil {
			t.Fatal(err)
		}
		return l, e, rec
	}
	l, h, rec := replica()
	_, h2, _ := replica()

	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "campaigns"}
	alice := person("alice@example.com", domain.RoleOperator)
	claimed := func(key, typ string) (domain.Operation, int64) {
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: typ, Content: json.RawMessage(`{"a":"` + key + `"}`),
			Claim: &domain.Claim{Worker: "w"}})
		if err != nil {
			t.Fatal(err)
		}
		if res.Claim == nil {
			return res.Operation, 0
		}
		if _, err := l.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: res.Claim.Lease.Token}); err != nil {
			t.Fatal(err)
		}
		return res.Operation, res.Claim.Lease.Token
	}
	unknown := func(key string) domain.Operation {
		op, tok := claimed(key, "crm.task.create")
		op, err := l.Workflow.Settle(ctx, wf, op.ID, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeUnknown,
			Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Code: "read_timeout", Message: "no answer"}})
		if err != nil || op.State != domain.UnknownOutcome {
			t.Fatalf("settle unknown: %s %v", op.State, err)
		}
		return op
	}

	// A: completed by its worker.
	a, tok := claimed("a", "crm.task.create")
	if _, err := l.Workflow.Settle(ctx, wf, a.ID, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "r-a"}}); err != nil {
		t.Fatal(err)
	}
	// B: lost after begin; alice takes it 10 minutes later and confirms
	// after 25 more.
	clock = clock.Add(time.Minute)
	b := unknown("b")
	reason := b.LastError.Code
	clock = clock.Add(10 * time.Minute)
	b, err := l.Desk.Assign(ctx, alice, b.ID, domain.Assign{To: alice.Person(), Reason: "mine"})
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(25 * time.Minute)
	entered, assigned := *b.DeskEnteredAt, *b.AssignedAt
	b, err = l.Desk.Resolve(ctx, alice, b.ID, domain.Resolve{Action: domain.ResolveConfirmExecuted, Result: &domain.Result{Ref: "r-b"}, Reason: "found it"})
	if err != nil {
		t.Fatal(err)
	}
	// E: lost after begin; alice confirms it 5 minutes later without
	// taking it first — a decision without a take still costs her time.
	clock = clock.Add(time.Minute)
	e := unknown("e")
	clock = clock.Add(5 * time.Minute)
	eEntered := *e.DeskEnteredAt
	e, err = l.Desk.Resolve(ctx, alice, e.ID, domain.Resolve{Action: domain.ResolveConfirmExecuted, Result: &domain.Result{Ref: "r-e"}, Reason: "found it"})
	if err != nil {
		t.Fatal(err)
	}
	// An event with one action, delivered twice: one event, one operation.
	for range 2 {
		if _, err := l.Workflow.RegisterEvent(ctx, wf, domain.EventRegistration{EventID: "evt_9", Actions: []domain.EventAction{
			{Action: "task", Type: "crm.task.create", Content: json.RawMessage(`{"a":"evt_9"}`)}}}); err != nil {
			t.Fatal(err)
		}
	}
	// C: waits for approval; D: left on the desk.
	clock = clock.Add(time.Minute)
	c, _ := claimed("c", "coupon.issue")
	clock = clock.Add(time.Minute)
	d := unknown("d")
	clock = clock.Add(7 * time.Minute)

	// Deliver every notification: B handed off and resolved, C, D.
	dl := &reconcile.Deliverer{Store: st, Sender: notify.NewSender(notify.Sender{AllowPrivate: true, Getenv: func(string) string { return "whsec_dGVzdC1zZWNyZXQ=" }}), Observe: rec.ObserveDelivery,
		Now: func() time.Time { return clock.Add(time.Second) }}
	for {
		n, err := dl.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		dl.Wait()
		if n == 0 {
			break
		}
	}

	ttr := b.UpdatedAt.Sub(entered).Seconds()
	ttrE := e.UpdatedAt.Sub(eEntered).Seconds()
	handling := b.UpdatedAt.Sub(assigned).Seconds()
	age := func(op domain.Operation) float64 { return math.Floor(clock.Sub(*op.DeskEnteredAt).Seconds()) }
	got := scrape(t, h)
	want := map[string]float64{
		`handoff_attempts_total{type="crm.task.create"}`:                                           4,
		`handoff_operations_total{outcome="completed",type="crm.task.create"}`:                     3,
		`handoff_confirmed_effects_total{by="worker",type="crm.task.create"}`:                      1,
		`handoff_confirmed_effects_total{by="person",type="crm.task.create"}`:                      2,
		fmt.Sprintf(`handoff_desk_entries_total{reason=%q,type="crm.task.create"}`, reason):        3,
		`handoff_desk_entries_total{reason="requires_approval",type="coupon.issue"}`:               1,
		`handoff_resolutions_total{decision="confirm_executed",type="crm.task.create"}`:            2,
		`handoff_operations_registered_total{type="crm.task.create"}`:                              5,
		`handoff_operations_registered_total{type="coupon.issue"}`:                                 1,
		`handoff_events_received_total`:                                                            1,
		`handoff_human_handling_from_entry_seconds_count`:                                          2,
		`handoff_human_handling_from_entry_seconds_sum`:                                            ttr + ttrE,
		`handoff_desk_items{namespace="campaigns",state="unknown_outcome",type="crm.task.create"}`: 1,
		`handoff_desk_items{namespace="campaigns",state="awaiting_approval",type="coupon.issue"}`:  1,
		`handoff_desk_oldest_item_age_seconds{namespace="campaigns",type="crm.task.create"}`:       age(d),
		`handoff_desk_oldest_item_age_seconds{namespace="campaigns",type="coupon.issue"}`:          age(c),
		`handoff_notifications_total{result="delivered"}`:                                          6 + 3, // and 3 incidents' own notices
		`handoff_notifications_total{result="retry"}`:                                              0,
		`handoff_notifications_total{result="failed"}`:                                             0,
		`handoff_notification_outbox_pending`:                                                      0,
		`handoff_notification_outbox_oldest_age_seconds`:                                           0,
		`handoff_notification_delivery_seconds_count`:                                              6 + 3,
		`handoff_time_to_resolve_seconds_count`:                                                    2,
		`handoff_time_to_resolve_seconds_sum`:                                                      ttr + ttrE,
		`handoff_human_handling_seconds_count`:                                                     1,
		`handoff_human_handling_seconds_sum`:                                                       handling,
		`handoff_settled_total{by="person"}`:                                                       2, // B and E
		`handoff_settled_total{by="lookup"}`:                                                       0,
	}
	for _, le := range []float64{60, 900, 1800, 3600} {
		in := func(v float64) float64 {
			if v <= le {
				return 1
			}
			return 0
		}
		want[fmt.Sprintf(`handoff_time_to_resolve_seconds_bucket{le="%g"}`, le)] = in(ttr) + in(ttrE)
		want[fmt.Sprintf(`handoff_human_handling_from_entry_seconds_bucket{le="%g"}`, le)] = in(ttr) + in(ttrE)
		want[fmt.Sprintf(`handoff_human_handling_seconds_bucket{le="%g"}`, le)] = in(handling)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-6 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	// Nothing else of ours: no stray series or label values.
	for k := range onlyHandoff(got) {
		if _, ok := want[k]; !ok && !strings.Contains(k, "_bucket{") && k != "handoff_notification_delivery_seconds_sum" {
			t.Errorf("unexpected series %s = %v", k, got[k])
		}
	}
	// The scenario's own checks: B took 35 minutes, 25 of them in alice's hands.
	if ttr != 35*60 || handling != 25*60 || ttrE != 5*60 {
		if !storetest.Postgres() { // on PostgreSQL the transitions use the database's clock
			t.Errorf("time to resolve %v s, handling %v s; want 2100 and 1500", ttr, handling)
		}
	}

	// The second replica reads the same gauges from the database.
	other := scrape(t, h2)
	for k, v := range got {
		if strings.HasPrefix(k, "handoff_desk_items") || strings.HasPrefix(k, "handoff_desk_oldest") {
			if other[k] != v {
				t.Errorf("replica 2: %s = %v, replica 1 %v", k, other[k], v)
			}
		}
	}
}
