package domain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// notifiedCards are testCards whose notifications go somewhere.
func notifiedCards() domain.Cards {
	return testCards().WithDefaultDestination(domain.Destination{URL: "https://hooks.example.com/h", Format: domain.FormatStandard,
		Unsigned: true})
}

// incidentNotices are the incident notifications made due on an item.
func incidentNotices(t *testing.T, st domain.LedgerStore, opID string) []domain.NotificationRecord {
	t.Helper()
	recs, err := st.Notifications(context.Background(), opID)
	if err != nil {
		t.Fatal(err)
	}
	var out []domain.NotificationRecord
	for _, r := range recs {
		if r.Type == domain.NotifyIncidentOpened || r.Type == domain.NotifyIncidentGrew {
			out = append(out, r)
		}
	}
	return out
}

// TestIncidents_KeptAndAnnounced: items entering the desk make kept
// incidents, one per type and error kind, with counts; the first item
// announces the incident, growth is announced when it doubles.
func TestIncidents_KeptAndAnnounced(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, notifiedCards())
	var ops []domain.Operation
	for i := range 5 {
		ops = append(ops, intoDesk(t, l, fmt.Sprintf("evt_inc:%d", i), i < 3)) // 3 timeouts, 2 validation errors
	}
	got, err := l.Incidents.DeskIncidents(ctx, ada)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("incidents: %+v", got)
	}
	timeouts := got[0]
	if timeouts.Error.Class == "validation" {
		timeouts = got[1] // the largest first
	}
	if timeouts.Error.Class != "timeout" || timeouts.OpenItems != 3 || timeouts.TotalItems != 3 || timeouts.Provider != "acme-crm" ||
		timeouts.Status != domain.IncidentOpen || len(timeouts.Namespaces) != 1 || timeouts.FirstSeen.IsZero() ||
		len(timeouts.States()) != 1 || timeouts.States()[0] != domain.UnknownOutcome {
		t.Fatalf("the timeouts' incident: %+v", timeouts)
	}
	// Notices: the first item opened it; the second doubled it; the third
	// did not (2 → 3).
	want := []string{domain.NotifyIncidentOpened, domain.NotifyIncidentGrew, ""}
	for i, w := range want {
		n := incidentNotices(t, st, ops[i].ID)
		if w == "" {
			if len(n) != 0 {
				t.Fatalf("item %d: a growth of one in three was announced: %+v", i, n)
			}
			continue
		}
		if len(n) != 1 || n[0].Type != w || n[0].Summary.Incident == nil || n[0].Summary.Incident.ID != timeouts.ID ||
			n[0].Summary.DeskPath != domain.IncidentPath(timeouts.ID) || n[0].Summary.Content != nil {
			t.Fatalf("item %d's notices: %+v", i, n)
		}
	}
	if n := incidentNotices(t, st, ops[1].ID)[0].Summary.Incident; n.NewItems != 1 || n.TotalItems != 2 {
		t.Fatalf("growth notice: %+v", n)
	}
	in, items, events, err := l.Incidents.DeskIncident(ctx, ada, timeouts.ID)
	if err != nil || len(items) != 3 || !items[0].Open || items[0].Key != "evt_inc:0" || len(events) != 1 ||
		events[0].Action != domain.IncidentActionOpened || in.OpenItems != 3 {
		t.Fatalf("the incident's page: %+v %+v %+v %v", in, items, events, err)
	}
}

// TestIncidents_ResolveWhenDecided: deciding an incident's last open item
// resolves it; a new item reopens it; an ignored one stays ignored.
func TestIncidents_ResolveWhenDecided(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, notifiedCards())
	a := intoDesk(t, l, "evt_res:a", false)
	b := intoDesk(t, l, "evt_res:b", false)
	list, _ := l.Incidents.DeskIncidents(ctx, ada)
	if len(list) != 1 {
		t.Fatalf("incidents: %+v", list)
	}
	id := list[0].ID
	cancel := func(op domain.Operation) {
		t.Helper()
		if _, err := l.Desk.Resolve(ctx, triager, op.ID, domain.Resolve{Action: domain.ResolveCancel, Reason: "gone",
			ExpectedVersion: op.Version}); err != nil {
			t.Fatal(err)
		}
	}
	cancel(a)
	if in, _, _, _ := l.Incidents.DeskIncident(ctx, ada, id); in.OpenItems != 1 || in.Status != domain.IncidentOpen {
		t.Fatalf("one of two decided: %+v", in)
	}
	cancel(b)
	in, items, events, err := l.Incidents.DeskIncident(ctx, ada, id)
	if err != nil || in.OpenItems != 0 || in.TotalItems != 2 || in.Status != domain.IncidentResolved || in.StatusBy != "" ||
		items[0].Open || events[len(events)-1].Action != domain.IncidentActionResolved {
		t.Fatalf("both decided: %+v %+v %+v %v", in, items, events, err)
	}
	c := intoDesk(t, l, "evt_res:c", false)
	in, _, _, _ = l.Incidents.DeskIncident(ctx, ada, id)
	if in.Status != domain.IncidentOpen || in.OpenItems != 1 || in.TotalItems != 3 {
		t.Fatalf("a new item of a resolved incident: %+v", in)
	}
	if n := incidentNotices(t, st, c.ID); len(n) != 1 || n[0].Type != domain.NotifyIncidentOpened || !n[0].Summary.Incident.Reopened {
		t.Fatalf("the reopening's notice: %+v", n)
	}
	if _, err := l.Incidents.TriageIncident(ctx, triager, id, domain.Triage{Kind: domain.TriageIgnore, Text: "known CRM flake"}); err != nil {
		t.Fatal(err)
	}
	d := intoDesk(t, l, "evt_res:d", false)
	in, _, _, _ = l.Incidents.DeskIncident(ctx, ada, id)
	if in.Status != domain.IncidentIgnored || in.OpenItems != 2 || len(incidentNotices(t, st, d.ID)) != 0 {
		t.Fatalf("a new item of an ignored incident: %+v", in)
	}
}

// TestIncidents_TriageAudited: each triage action is on the incident's
// timeline and in the audit trail; viewers and stale versions are refused
// and write nothing.
func TestIncidents_TriageAudited(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	intoDesk(t, l, "evt_tri:a", true)
	list, _ := l.Incidents.DeskIncidents(ctx, ada)
	id := list[0].ID
	viewer := triager
	viewer.Role = domain.RoleViewer
	if _, err := l.Incidents.TriageIncident(ctx, viewer, id, domain.Triage{Kind: domain.TriageAcknowledge}); domain.ErrorCode(err) != domain.EForbidden {
		t.Fatalf("a viewer acknowledged: %v", err)
	}
	in, err := l.Incidents.TriageIncident(ctx, triager, id, domain.Triage{Kind: domain.TriageAcknowledge, ExpectedVersion: list[0].Version})
	if err != nil || in.Status != domain.IncidentAcknowledged || in.AcknowledgedBy != "ann@example.com" {
		t.Fatalf("acknowledge: %+v %v", in, err)
	}
	if _, err := l.Incidents.TriageIncident(ctx, triager, id, domain.Triage{Kind: domain.TriageNote, Text: "late", ExpectedVersion: list[0].Version}); domain.ErrorCode(err) != domain.EVersionConflict {
		t.Fatalf("a note on a stale version: %v", err)
	}
	for _, tr := range []domain.Triage{{Kind: domain.TriageOwner, Owner: triager.Person()}, {Kind: domain.TriageNote, Text: "CRM says fixed at 03:10"},
		{Kind: domain.TriageResolve, Text: "provider fixed"}} {
		if _, err := l.Incidents.TriageIncident(ctx, triager, id, tr); err != nil {
			t.Fatalf("%s: %v", tr.Kind, err)
		}
	}
	in, _, events, err := l.Incidents.DeskIncident(ctx, ada, id)
	if err != nil || in.Owner.Subject != "ann" || in.Status != domain.IncidentResolved || in.StatusBy != "ann@example.com" {
		t.Fatalf("after triage: %+v %v", in, err)
	}
	var actions []string
	audited := map[string]bool{}
	evs, _, err := st.ListAudit(ctx, domain.AuditSelect{WithSystem: true, AuditQuery: domain.AuditQuery{Limit: 100}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Stream == domain.SystemStream {
			audited[e.ID] = e.Actor.Email == "ann@example.com"
		}
	}
	for _, e := range events {
		actions = append(actions, e.Action)
		if e.Actor != "" && !audited[e.AuditID] {
			t.Fatalf("%s is not in the audit trail as Ann's: %+v", e.Action, e)
		}
	}
	if fmt.Sprint(actions) != "[incident_opened incident_acknowledged incident_owner_set incident_noted incident_resolved]" {
		t.Fatalf("timeline: %v", actions)
	}
}

// TestIncidents_MarkTwins: an item that a registration of the same content
// under another key waits on is marked, on the list and on its page.
func TestIncidents_MarkTwins(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	intoDesk(t, l, "evt_twin:a", true)
	intoDesk(t, l, "evt_twin:c", true)
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_twin:b", Type: "crm.task.create",
		Content: json.RawMessage(`{"a":"evt_twin:a"}`)})
	if err != nil || res.Operation.State != domain.AwaitingApproval {
		t.Fatalf("the twin: %+v %v", res.Operation.State, err)
	}
	list, _ := l.Incidents.DeskIncidents(ctx, ada)
	if len(list) != 1 || list[0].Twins != 1 {
		t.Fatalf("incidents: %+v", list)
	}
	_, items, _, _ := l.Incidents.DeskIncident(ctx, ada, list[0].ID)
	if len(items) != 2 || !items[0].Twin || items[1].Twin {
		t.Fatalf("items: %+v", items)
	}
}

var triager = domain.Actor{Kind: domain.ActorPerson, Name: "Ann", Email: "ann@example.com", Subject: "ann", Issuer: "idp",
	Role: domain.RoleOperator}
