package web

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/notify"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store/storetest"
)

func init() {
	testPeople["adm"] = domain.Actor{Kind: domain.ActorPerson, Name: "Adam Admin", Email: "adam@example.com", Subject: "adm", Role: domain.RoleAdmin}
}

// TestDesk_Notifications: the operation page shows its notification and
// each attempt; the admin page shows the destination's failure rate and last
// error; "send again" needs an admin and a reason, is audited, and sends the
// same webhook-id again.
func TestDesk_Notifications(t *testing.T) {
	var mu sync.Mutex
	var ids []string
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		ids = append(ids, r.Header.Get("webhook-id"))
		if len(ids) == 1 {
			w.WriteHeader(http.StatusGone)
			_, _ = w.Write([]byte("no such hook"))
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rx.Close()
	d := newDesk(t)
	// Four items of the incident before there is anywhere to notify: its
	// opening and growth are announced to nobody, and the item below does
	// not double it, so its own notification is the only one.
	for _, k := range []string{"evt_0a:crm_task", "evt_0b:crm_task", "evt_0c:crm_task", "evt_0d:crm_task"} {
		d.intoDesk(k, true)
	}
	d.ledger.Cards = d.ledger.Cards.WithDefaultNotify(rx.URL)
	op := d.intoDesk("evt_1:crm_task", true)
	dl := &reconcile.Deliverer{Store: d.store, Sender: notify.NewSender(notify.Sender{AllowPrivate: true, Getenv: func(string) string { return "whsec_dGVzdC1zZWNyZXQ=" }}),
		Now: func() time.Time { return time.Now().Add(time.Second) }}
	deliver := func() {
		if _, err := dl.Pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		dl.Wait()
	}
	deliver()

	p := d.get("adm", "/desk/operations/"+op.ID).want(http.StatusOK)
	if len(p.all("notification-row")) != 1 || !strings.Contains(p.text("notification-status"), "failed") ||
		!strings.Contains(p.text("notification-attempt"), "HTTP 410") || !strings.Contains(p.text("notification-attempt"), "no such hook") {
		t.Fatalf("operation page notifications: %q / %q", p.text("notification-status"), p.text("notification-attempt"))
	}
	p.one("resend-form")
	d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK).none("resend-form")

	d.get("ada", "/desk/notifications").want(http.StatusForbidden)
	p = d.get("adm", "/desk/notifications").want(http.StatusOK)
	if p.text("failure-rate") != "100%" || !strings.Contains(p.text("last-error"), "HTTP 410") || len(p.all("destination-row")) != 1 {
		t.Fatalf("destinations: rate %q, last error %q", p.text("failure-rate"), p.text("last-error"))
	}
	// The page lists the failed notification's attempts, as the operation's
	// page does — not "none yet" — each part apart from the next.
	if got := p.text("notification-attempt"); !strings.Contains(got, "#1 · ") || !strings.Contains(got, " · HTTP 410 · ") {
		t.Fatalf("the notifications page's attempt: %q", got)
	}
	if f := d.get("vic", "/desk/types").want(http.StatusOK).all("card-field-notify"); len(f) != 2 || !strings.Contains(text(f[0]), rx.URL) {
		t.Fatalf("types page: %d notify fields", len(f))
	}
	ns, _ := d.store.Notifications(context.Background(), op.ID)
	resend := "/desk/notifications/" + ns[0].ID + "/resend"

	d.post("adm", resend, url.Values{}).want(http.StatusUnprocessableEntity)
	d.post("ada", resend, url.Values{"reason": {"the hook is back"}}).want(http.StatusForbidden)
	if ns, _ := d.store.Notifications(context.Background(), op.ID); ns[0].Status != domain.NotificationFailed {
		t.Fatalf("a refused resend changed the row: %s", ns[0].Status)
	}
	r := d.post("adm", resend, url.Values{"reason": {"the hook is back"}}).want(http.StatusSeeOther)
	if loc := r.header.Get("Location"); loc != "/desk/notifications?resent="+ns[0].ID {
		t.Fatalf("redirect %q", loc)
	}
	deliver()
	ns, _ = d.store.Notifications(context.Background(), op.ID)
	if ns[0].Status != domain.NotificationDelivered || len(ns[0].History) != 2 {
		t.Fatalf("after send again: %s, %d attempts", ns[0].Status, len(ns[0].History))
	}
	if len(ids) != 2 || ids[0] != ids[1] {
		t.Fatalf("webhook-ids %v, want the same twice", ids)
	}
	evs, err := d.store.Timeline(context.Background(), domain.SystemStream)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range evs {
		if e.Action == "notification_resent" && e.Actor.Identity() == "adam@example.com" && e.Reason == "the hook is back" &&
			strings.Contains(string(e.Detail), ns[0].ID) {
			found = true
		}
	}
	if !found {
		t.Fatal("send again is not in the audit trail")
	}
}

// TestDesk_OverviewRecovery: the overview's last week — people's
// resolutions and their time to resolve, entries and resolutions per day,
// unresolved items by assignee.
func TestDesk_OverviewRecovery(t *testing.T) {
	d := newDesk(t)
	clock := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	if !storetest.Postgres() { // PostgreSQL's transitions keep its own clock
		d.store.SetClock(func() time.Time { return clock })
	}
	a := d.intoDesk("evt_1:a", true)
	b := d.intoDesk("evt_2:b", true)
	d.intoDesk("evt_3:c", false)
	ctx := context.Background()
	if _, err := d.ledger.Desk.Assign(ctx, testPeople["ada"], b.ID, domain.Assign{To: testPeople["ada"].Person(), Reason: "mine"}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(10 * time.Minute)
	if _, err := d.ledger.Desk.Resolve(ctx, testPeople["ada"], a.ID, domain.Resolve{Action: domain.ResolveConfirmExecuted,
		Result: &domain.Result{Ref: "r"}, Reason: "found it"}); err != nil {
		t.Fatal(err)
	}
	p := d.get("vic", "/desk").want(http.StatusOK)
	ttr := p.text("time-to-resolve")
	if !strings.Contains(ttr, "1 resolved by people") || (!storetest.Postgres() && !strings.Contains(ttr, "p50 10m0s")) {
		t.Fatalf("time to resolve: %q", ttr)
	}
	if n := len(chartRows(p, "chart-daily")); n != 30 {
		t.Fatalf("%d day rows, want 30", n)
	}
	if in, out := chartSum(p, "chart-daily", 1), chartSum(p, "chart-daily", 2); in != 3 || out != 1 {
		t.Fatalf("entries %d, resolutions %d over the month; want 3 and 1", in, out)
	}
	loads := map[string]bool{}
	for _, row := range p.all("assignee-row") {
		loads[strings.Join(strings.Fields(text(row)), " ")] = true
	}
	if len(loads) != 2 || !loads["ada@example.com 1"] || !loads["nobody 1"] {
		t.Fatalf("by assignee: %v", loads)
	}
}

// TestDesk_NotificationsMarkUnsigned: a destination the card sends to
// unsigned is delivered without a signature and marked as such on the
// Notifications page — listed before anything was sent, and on its row
// after; a signed one is not marked.
func TestDesk_NotificationsMarkUnsigned(t *testing.T) {
	var mu sync.Mutex
	var sigs []string
	rx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		sigs = append(sigs, r.Header.Get("webhook-signature"))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rx.Close()
	cards := testCards()
	crm := cards["crm.task.create"]
	crm.Notify = []domain.Destination{{URL: rx.URL + "/relay", Format: domain.FormatStandard, Unsigned: true}}
	cards[crm.Name] = crm
	d := newDeskWith(t, cards)

	p := d.get("adm", "/desk/notifications").want(http.StatusOK)
	if got := p.text("unsigned-destinations"); !strings.Contains(got, rx.URL+"/relay (crm.task.create)") {
		t.Fatalf("unsigned notice: %q", got)
	}
	d.intoDesk("evt_1:crm_task", true)
	dl := &reconcile.Deliverer{Store: d.store, Sender: notify.NewSender(notify.Sender{AllowPrivate: true}),
		Now: func() time.Time { return time.Now().Add(time.Second) }}
	if _, err := dl.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	dl.Wait()
	mu.Lock()
	// The item's notification and its incident's opening, both unsigned.
	if len(sigs) != 2 || sigs[0] != "" || sigs[1] != "" {
		t.Fatalf("signatures %q", sigs)
	}
	mu.Unlock()
	p = d.get("adm", "/desk/notifications").want(http.StatusOK)
	if len(p.all("destination-row")) != 1 || len(p.all("destination-unsigned")) != 1 {
		t.Fatalf("the destination's row is not marked unsigned:\n%s", p.body)
	}

	signed := newDesk(t)
	signed.get("adm", "/desk/notifications").want(http.StatusOK).none("unsigned-destinations")
}
