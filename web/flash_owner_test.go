package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// TestDesk_DraftStaysWithItsPerson: a decision Alice typed into a session
// that expired is kept for her — but when Bob signs in on that browser
// instead, he sees neither her text nor the notice, and it is gone; Alice
// signing in again gets it back. Signing out takes a kept draft along.
func TestDesk_DraftStaysWithItsPerson(t *testing.T) {
	r := newSignInRig(t, false, "")
	ctx := context.Background()
	l := domain.NewLedger(r.store, testCards())
	reg, err := l.Workflow.Register(ctx, testWorkflow, domain.Registration{Key: "evt_draft:crm_task", Type: "crm.task.create",
		Content: json.RawMessage(`{"owner":"u_9"}`)})
	if err != nil {
		t.Fatal(err)
	}
	id := reg.Operation.ID
	typed := url.Values{"form": {"note"}, "text": {"Alice's private note about the customer"}}

	expire := func(b *browser) {
		t.Helper()
		b.devSignIn("alice@example.com", "operator")
		r.clock.Add(31 * time.Minute) // idle: the session expires with its cookie still in the browser
		if res := b.post("/desk/operations/"+id+"/notes", typed); res.status != http.StatusSeeOther ||
			!strings.HasPrefix(res.header.Get("Location"), "/auth/login?expired=1") {
			t.Fatalf("the expired post: %d %s", res.status, res.header.Get("Location"))
		}
	}
	shows := func(b *browser) bool {
		t.Helper()
		p := b.get("/desk/operations/" + id)
		if p.status != http.StatusOK {
			t.Fatalf("the item: %d", p.status)
		}
		return strings.Contains(p.body, "Alice&#39;s private note") || strings.Contains(p.body, "Alice's private note")
	}

	b := r.browser()
	expire(b)
	b.devSignIn("bob@example.com", "operator")
	if shows(b) {
		t.Fatal("Bob, signed in on Alice's browser, reads the note she typed")
	}
	b.devSignIn("alice@example.com", "operator")
	if shows(b) {
		t.Fatal("the draft came back after Bob's page dropped it")
	}

	b = r.browser()
	expire(b)
	b.devSignIn("alice@example.com", "operator")
	if !shows(b) {
		t.Fatal("Alice, signed in again, lost what she typed")
	}

	b = r.browser()
	expire(b)
	b.devSignIn("alice@example.com", "operator")
	b.post("/auth/logout", nil)
	if b.cookie("handoff_flash") != "" {
		t.Fatal("signing out left the kept draft in the browser")
	}
}
