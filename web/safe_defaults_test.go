package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/opshandoff/handoff/domain"
)

// actionOrder lists the decide panel's decisions in page order, each marked
// "+" when it is open.
func actionOrder(p answer) []string {
	var out []string
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if id := attr(n, "data-testid"); strings.HasPrefix(id, "action-") {
			mark := ""
			if hasAttr(n, "open") {
				mark = "+"
			}
			out = append(out, mark+strings.TrimPrefix(id, "action-"))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.one("actions"))
	return out
}

// TestDesk_LoopItemDoesNotOfferRetryFirst: an item refused because it
// triggered itself offers cancelling first and open; retry comes after it,
// closed, with a warning. An ordinary terminal failure keeps retry first.
func TestDesk_LoopItemDoesNotOfferRetryFirst(t *testing.T) {
	d := newDesk(t)
	d.register("evt_1:crm_task", "crm.task.create")
	res, err := d.ledger.Workflow.Register(context.Background(), testWorkflow, domain.Registration{Key: "evt_1:crm_task:again",
		Type: "crm.task.create", EventID: "evt_1", CausedBy: "evt_1:crm_task", Content: json.RawMessage(`{"owner":"u_9"}`)})
	if err != nil {
		t.Fatal(err)
	}
	loop := res.Operation
	if loop.State != domain.FailedTerminal || !loop.Looped() {
		t.Fatalf("not a loop item: %s %+v", loop.State, loop.LastError)
	}
	p := d.get("ada", "/desk/operations/"+loop.ID).want(http.StatusOK)
	if got := strings.Join(actionOrder(p), " "); !strings.HasPrefix(got, "+cancel retry ") {
		t.Fatalf("loop item's decisions: %s", got)
	}
	if !strings.Contains(p.text("loop-warning"), "triggered itself") {
		t.Fatalf("loop warning: %q", p.text("loop-warning"))
	}

	plain := d.intoDesk("evt_2:crm_task", false)
	p = d.get("ada", "/desk/operations/"+plain.ID).want(http.StatusOK)
	if got := strings.Join(actionOrder(p), " "); !strings.HasPrefix(got, "+retry cancel ") {
		t.Fatalf("ordinary failure's decisions: %s", got)
	}
	p.none("loop-warning")
}

// TestDesk_NeverSentShowsNoLookupOrResendWarning: an operation whose
// provider key was never sent has nothing to look up at the provider and no
// re-send to warn about; once its key was sent, both are shown.
func TestDesk_NeverSentShowsNoLookupOrResendWarning(t *testing.T) {
	d := newDesk(t)
	never := d.intoDesk("evt_1:crm_task", false)
	if never.ProviderKeyFirstSentAt != nil {
		t.Fatal("the harness sent the key")
	}
	p := d.get("ada", "/desk/operations/"+never.ID).want(http.StatusOK)
	p.none("lookup-link")
	p.none("confirm-risk-retry")
	if got := p.text("retention"); !strings.Contains(got, "never sent") || strings.Contains(got, "twice") {
		t.Fatalf("retention of a key never sent: %q", got)
	}

	sent := d.intoDesk("evt_2:crm_task", true)
	p = d.get("ada", "/desk/operations/"+sent.ID).want(http.StatusOK)
	p.one("lookup-link")
	if got := p.text("retention"); !strings.Contains(got, "does not deduplicate") {
		t.Fatalf("retention of a sent key: %q", got)
	}
}
