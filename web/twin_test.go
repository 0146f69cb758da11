package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// twinOf registers the content of first under another key: held as its
// twin (twin_unresolved) while first's outcome is open.
func (d *desk) twinOf(first domain.Operation, key string) domain.Operation {
	d.t.Helper()
	res, err := d.ledger.Workflow.Register(context.Background(), testWorkflow, domain.Registration{Key: key, Type: first.Type,
		Content: first.Content})
	if err != nil || res.Operation.State != domain.AwaitingApproval || res.Operation.LastError.Code != domain.CodeTwinUnresolved {
		d.t.Fatalf("twin: %+v %v", res.Operation, err)
	}
	return res.Operation
}

// TestDesk_TwinSideBySide: the operation page and the approvals page of a
// registration held as a twin show the twin beside it — its key (a link),
// state, provider key, attempts, and that the contents are the same — and,
// once the held one is revised, how they differ.
func TestDesk_TwinSideBySide(t *testing.T) {
	d := newDesk(t)
	first := d.intoDesk("evt_1:crm_task", true) // unknown_outcome, one attempt, sent
	twin := d.twinOf(first, "evt_1:crm_task-again")

	check := func(p answer, where string) {
		t.Helper()
		panels := p.all("twin")
		if len(panels) != 1 {
			t.Fatalf("%s: %d twin panels", where, len(panels))
		}
		for id, want := range map[string]string{"twin-this-key": twin.Key, "twin-key": first.Key, "twin-state": "unknown",
			"twin-provider-key": first.ProviderKey, "twin-attempts": "1", "twin-content": "The same content"} {
			if got := p.text(id); !strings.Contains(strings.ToLower(got), strings.ToLower(want)) {
				t.Fatalf("%s: %s says %q, want %q", where, id, got, want)
			}
		}
		if href := attr(p.one("twin-link"), "href"); href != "/desk/operations/"+first.ID {
			t.Fatalf("%s: the twin links to %q", where, href)
		}
		if got := p.text("twin-sent"); strings.Contains(got, "never") {
			t.Fatalf("%s: the twin's send is not shown: %q", where, got)
		}
	}
	check(d.get("ada", "/desk/operations/"+twin.ID).want(http.StatusOK), "operation page")
	ap := d.get("ada", "/desk/approvals").want(http.StatusOK)
	check(ap, "approvals page")
	if p := d.get("ada", "/desk/operations/"+first.ID).want(http.StatusOK); len(p.all("twin")) != 0 {
		t.Fatal("the original is shown as held")
	}

	// The held one revised: it still waits for a decision on running it
	// beside its twin, which now differs, and the page says how.
	if _, err := d.ledger.Desk.Revise(context.Background(), testPeople["bob"], twin.ID, domain.Revise{
		Content: json.RawMessage(`{"owner":"u_9","title":"Follow up again","ref":"evt_1:crm_task"}`), Reason: "a second task on purpose"}); err != nil {
		t.Fatal(err)
	}
	p := d.get("ada", "/desk/operations/"+twin.ID).want(http.StatusOK)
	if got := p.text("twin-content"); !strings.Contains(got, "differ") || !strings.Contains(p.text("twin"), "+ \"title\": \"Follow up again\"") {
		t.Fatalf("the revised twin's difference is not shown: %q / %q", got, p.text("twin"))
	}
}

// TestDesk_TwinContentHidden: with content_visible_to above the viewer, the
// twin panel says "content hidden" and shows neither content nor whether it
// is the same; an operator sees the comparison.
func TestDesk_TwinContentHidden(t *testing.T) {
	cards := testCards()
	crm := cards["crm.task.create"]
	crm.ContentVisibleTo = domain.RoleOperator
	cards[crm.Name] = crm
	d := newDeskWith(t, cards)
	first := d.intoDesk("evt_1:crm_task", true)
	twin := d.twinOf(first, "evt_1:crm_task-again")

	for _, page := range []string{"/desk/operations/" + twin.ID, "/desk/approvals"} {
		v := d.get("vic", page).want(http.StatusOK)
		if got := v.text("twin-content"); !strings.Contains(got, "Content hidden") {
			t.Fatalf("%s: the viewer's twin panel says %q", page, got)
		}
		if strings.Contains(v.body, "Follow up") || strings.Contains(v.body, "u_9") {
			t.Fatalf("%s: the viewer reads hidden content", page)
		}
		if len(v.all("twin-key")) != 1 {
			t.Fatalf("%s: the viewer does not see which operation is the twin", page)
		}
		if got := d.get("ada", page).want(http.StatusOK).text("twin-content"); !strings.Contains(got, "The same content") {
			t.Fatalf("%s: the approver's twin panel says %q", page, got)
		}
	}
}

// TestDesk_SupersedesSentSideBySide: an operation that supersedes one that
// was sent is held too (supersedes_sent); its page shows the superseded one
// beside it, and how the contents differ.
func TestDesk_SupersedesSentSideBySide(t *testing.T) {
	d := newDesk(t)
	first := d.intoDesk("evt_1:crm_task", true) // sent, then in doubt
	first, err := d.ledger.Desk.Resolve(context.Background(), testPeople["bob"], first.ID, domain.Resolve{Action: domain.ResolveConfirmNotExecuted,
		Then: domain.ResolveCancel, Reason: "not in the CRM", ExpectedVersion: first.Version})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.ledger.Workflow.Register(context.Background(), testWorkflow, domain.Registration{Key: "evt_1:crm_task-v2", Type: first.Type,
		Supersedes: first.ID, Content: json.RawMessage(`{"owner":"u_9","title":"Follow up, corrected","ref":"evt_1:crm_task"}`)})
	if err != nil || res.Operation.LastError == nil || res.Operation.LastError.Code != domain.CodeSupersedesSent {
		t.Fatalf("supersedes: %+v %v", res.Operation, err)
	}
	p := d.get("ada", "/desk/operations/"+res.Operation.ID).want(http.StatusOK)
	if got := p.text("twin-key"); got != first.Key {
		t.Fatalf("the superseded operation is not beside it: %q", got)
	}
	if got := p.text("twin-content"); !strings.Contains(got, "differ") || !strings.Contains(p.text("twin"), "Follow up, corrected") {
		t.Fatalf("the difference is not shown: %q", got)
	}
}
