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
	d.ledger.Cards = d.ledger.Cards.WithDefaultNotify(rx.URL)
	op := d.intoDesk("evt_1:crm_task", true)
	dl := &reconcile.Deliverer{Store: d.store, Sender: notify.NewSender(notify.Sender{AllowPrivate: true}),
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
