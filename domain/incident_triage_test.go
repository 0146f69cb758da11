package domain_test

import (
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

var (
	ann     = domain.Actor{Kind: domain.ActorPerson, Email: "ann@example.com", Subject: "ann", Role: domain.RoleOperator}
	viewer  = domain.Actor{Kind: domain.ActorPerson, Email: "vic@example.com", Subject: "vic", Role: domain.RoleViewer}
	workflw = domain.Actor{Kind: domain.ActorWorkflow, Name: "shop", Namespace: "campaigns"}
)

// TestDecideTriage: the triage state machine, every status against every
// action: what is allowed, what it leaves, and who may.
func TestDecideTriage(t *testing.T) {
	type tc struct {
		from   domain.IncidentStatus
		t      domain.Triage
		actor  domain.Actor
		want   domain.IncidentStatus // "" when refused
		code   domain.Code
		action string
	}
	note := func(k domain.TriageKind) domain.Triage { return domain.Triage{Kind: k, Text: "because"} }
	cases := []tc{
		{domain.IncidentOpen, domain.Triage{Kind: domain.TriageAcknowledge}, ann, domain.IncidentAcknowledged, "", domain.IncidentActionAcknowledged},
		{domain.IncidentAcknowledged, domain.Triage{Kind: domain.TriageAcknowledge}, ann, "", domain.EInvalidTransition, ""},
		{domain.IncidentResolved, domain.Triage{Kind: domain.TriageAcknowledge}, ann, "", domain.EInvalidTransition, ""},
		{domain.IncidentIgnored, domain.Triage{Kind: domain.TriageAcknowledge}, ann, "", domain.EInvalidTransition, ""},
		{domain.IncidentOpen, note(domain.TriageResolve), ann, domain.IncidentResolved, "", domain.IncidentActionResolved},
		{domain.IncidentAcknowledged, note(domain.TriageResolve), ann, domain.IncidentResolved, "", domain.IncidentActionResolved},
		{domain.IncidentResolved, note(domain.TriageResolve), ann, "", domain.EInvalidTransition, ""},
		{domain.IncidentIgnored, note(domain.TriageResolve), ann, "", domain.EInvalidTransition, ""},
		{domain.IncidentOpen, domain.Triage{Kind: domain.TriageResolve}, ann, "", domain.EInvalid, ""}, // a reason is required
		{domain.IncidentAcknowledged, note(domain.TriageIgnore), ann, domain.IncidentIgnored, "", domain.IncidentActionIgnored},
		{domain.IncidentIgnored, note(domain.TriageIgnore), ann, "", domain.EInvalidTransition, ""},
		{domain.IncidentResolved, note(domain.TriageReopen), ann, domain.IncidentOpen, "", domain.IncidentActionReopened},
		{domain.IncidentIgnored, note(domain.TriageReopen), ann, domain.IncidentOpen, "", domain.IncidentActionReopened},
		{domain.IncidentOpen, note(domain.TriageReopen), ann, "", domain.EInvalidTransition, ""},
		{domain.IncidentIgnored, domain.Triage{Kind: domain.TriageReopen}, ann, "", domain.EInvalid, ""},
		{domain.IncidentResolved, note(domain.TriageNote), ann, domain.IncidentResolved, "", domain.IncidentActionNote},
		{domain.IncidentOpen, domain.Triage{Kind: domain.TriageNote}, ann, "", domain.EInvalid, ""},
		{domain.IncidentIgnored, domain.Triage{Kind: domain.TriageOwner, Owner: ann.Person()}, ann, domain.IncidentIgnored, "", domain.IncidentActionOwner},
		{domain.IncidentOpen, domain.Triage{Kind: domain.TriageOwner}, ann, "", domain.EInvalidTransition, ""}, // nobody owns it already
		{domain.IncidentOpen, domain.Triage{Kind: domain.TriageAcknowledge}, viewer, "", domain.EForbidden, ""},
		{domain.IncidentOpen, note(domain.TriageNote), workflw, "", domain.EForbidden, ""},
		{domain.IncidentOpen, domain.Triage{Kind: "escalate"}, ann, "", domain.EInvalid, ""},
		{domain.IncidentOpen, domain.Triage{Kind: domain.TriageAcknowledge, ExpectedVersion: 2}, ann, "", domain.EVersionConflict, ""},
		{domain.IncidentOpen, domain.Triage{Kind: domain.TriageAcknowledge, ExpectedVersion: 3}, ann, domain.IncidentAcknowledged, "", domain.IncidentActionAcknowledged},
	}
	for _, c := range cases {
		in := domain.Incident{ID: "inc_1", Status: c.from, Version: 3, AcknowledgedBy: "someone", TotalItems: 4}
		out, ev, err := domain.DecideTriage(in, c.t, c.actor, t0)
		name := string(c.from) + " " + string(c.t.Kind) + " by " + c.actor.Identity()
		if c.want == "" {
			if domain.ErrorCode(err) != c.code || out.Status != c.from || out.Version != 3 {
				t.Errorf("%s: %v (%s), want refused %s with nothing changed", name, err, out.Status, c.code)
			}
			continue
		}
		if err != nil || out.Status != c.want || out.Version != 4 || ev.Action != c.action || ev.Actor != c.actor.Identity() || !ev.At.Equal(t0) {
			t.Errorf("%s: %+v %+v %v, want %s", name, out, ev, err, c.want)
			continue
		}
		switch c.t.Kind {
		case domain.TriageAcknowledge:
			if out.AcknowledgedBy != "ann@example.com" || out.AcknowledgedAt == nil {
				t.Errorf("%s: acknowledged by %q", name, out.AcknowledgedBy)
			}
		case domain.TriageReopen:
			if out.AcknowledgedBy != "" || out.NotifiedTotal != 4 || out.StatusBy != "ann@example.com" {
				t.Errorf("%s: a reopened incident: %+v", name, out)
			}
		case domain.TriageResolve, domain.TriageIgnore:
			if out.StatusBy != "ann@example.com" || out.StatusAt == nil {
				t.Errorf("%s: by %q", name, out.StatusBy)
			}
		}
	}
}

// TestIncidentJoined: what an item's entry does to its incident, and which
// entries are announced.
func TestIncidentJoined(t *testing.T) {
	notice := domain.Notification{ID: "msg_1", OperationID: "op_9"}
	entry := func(at time.Time) domain.IncidentEntry {
		return domain.IncidentEntry{IncidentKey: domain.IncidentKey{Type: "crm.task.create", Error: domain.ErrorKind{Class: "timeout"}},
			NewID: "inc_new", EventID: "iev_1", OperationID: "op_9", Namespace: "shop", Message: "read timeout", At: at,
			Notices: []domain.Notification{notice}}
	}
	notified := func(total int, at time.Time) domain.Incident {
		return domain.Incident{ID: "inc_1", Status: domain.IncidentOpen, OpenItems: total, TotalItems: total, NotifiedTotal: total,
			NotifiedAt: &at, Namespaces: []string{"campaigns"}, Version: 5}
	}
	cases := []struct {
		name      string
		prev      domain.Incident
		found     bool
		rejoin    bool
		at        time.Time
		notice    string
		newItems  int
		open, tot int
		status    domain.IncidentStatus
		event     string
	}{
		{"the first item opens it", domain.Incident{}, false, false, t0, domain.NotifyIncidentOpened, 1, 1, 1, domain.IncidentOpen, domain.IncidentActionOpened},
		{"the second doubles it", notified(1, t0), true, false, t0.Add(time.Minute), domain.NotifyIncidentGrew, 1, 2, 2, domain.IncidentOpen, ""},
		{"the fifth of 4 is coalesced", notified(4, t0), true, false, t0.Add(time.Minute), "", 0, 5, 5, domain.IncidentOpen, ""},
		{"after the quiet period one more is told", notified(4, t0), true, false, t0.Add(domain.IncidentNoticeQuiet), domain.NotifyIncidentGrew, 1, 5, 5, domain.IncidentOpen, ""},
		{"a rejoining item is no growth", notified(4, t0), true, true, t0.Add(time.Hour), "", 0, 5, 4, domain.IncidentOpen, ""},
		{"a resolved incident reopens", func() domain.Incident {
			in := notified(3, t0)
			in.Status, in.OpenItems, in.AcknowledgedBy = domain.IncidentResolved, 0, "ann@example.com"
			return in
		}(), true, false, t0.Add(time.Minute), domain.NotifyIncidentOpened, 1, 1, 4, domain.IncidentOpen, domain.IncidentActionReopened},
		{"an ignored incident stays ignored, untold", func() domain.Incident {
			in := notified(3, t0)
			in.Status = domain.IncidentIgnored
			return in
		}(), true, false, t0.Add(time.Hour), "", 0, 4, 4, domain.IncidentIgnored, ""},
		{"an acknowledged incident's growth is told", func() domain.Incident {
			in := notified(3, t0)
			in.Status = domain.IncidentAcknowledged
			return in
		}(), true, false, t0.Add(time.Hour), domain.NotifyIncidentGrew, 1, 4, 4, domain.IncidentAcknowledged, ""},
	}
	for _, c := range cases {
		in, notes, ev := domain.IncidentJoined(c.prev, c.found, c.rejoin, entry(c.at))
		if in.OpenItems != c.open || in.TotalItems != c.tot || in.Status != c.status || !in.LastSeen.Equal(c.at) || in.Message != "read timeout" {
			t.Errorf("%s: %+v", c.name, in)
		}
		if (ev == nil) != (c.event == "") || (ev != nil && ev.Action != c.event) {
			t.Errorf("%s: event %+v, want %q", c.name, ev, c.event)
		}
		if c.notice == "" {
			if len(notes) != 0 {
				t.Errorf("%s: announced %+v", c.name, notes)
			}
			continue
		}
		if len(notes) != 1 || notes[0].Type != c.notice || notes[0].Summary.Incident.NewItems != c.newItems ||
			notes[0].Summary.DeskPath != domain.IncidentPath(in.ID) || in.NotifiedTotal != in.TotalItems || !in.NotifiedAt.Equal(c.at) {
			t.Errorf("%s: notices %+v, incident %+v", c.name, notes, in)
		}
	}
	if in, _, _ := domain.IncidentJoined(domain.Incident{}, false, false, entry(t0)); in.ID != "inc_new" || len(in.Namespaces) != 1 {
		t.Errorf("a new incident: %+v", in)
	}
}

// TestIncidentBurst: a burst of 1,000 items makes about ten notices, not a
// thousand.
func TestIncidentBurst(t *testing.T) {
	var in domain.Incident
	found, notices := false, 0
	for i := range 1000 {
		e := domain.IncidentEntry{NewID: "inc_1", At: t0.Add(time.Duration(i) * time.Second / 10), Notices: []domain.Notification{{ID: "m"}}}
		var notes []domain.Notification
		in, notes, _ = domain.IncidentJoined(in, found, false, e)
		found = true
		notices += len(notes)
	}
	if in.TotalItems != 1000 || notices > 12 {
		t.Fatalf("1,000 items in 100 s made %d notices", notices)
	}
}

// TestIncidentItemLeft: the last open item's decision resolves an active
// incident; an ignored one stays ignored.
func TestIncidentItemLeft(t *testing.T) {
	x := domain.IncidentExit{OperationID: "op_1", EventID: "iev_2", At: t0}
	for _, c := range []struct {
		status domain.IncidentStatus
		open   int
		want   domain.IncidentStatus
	}{
		{domain.IncidentOpen, 2, domain.IncidentOpen},
		{domain.IncidentOpen, 1, domain.IncidentResolved},
		{domain.IncidentAcknowledged, 1, domain.IncidentResolved},
		{domain.IncidentIgnored, 1, domain.IncidentIgnored},
	} {
		in, ev := domain.IncidentItemLeft(domain.Incident{Status: c.status, OpenItems: c.open}, x)
		if in.Status != c.want || in.OpenItems != c.open-1 || (ev != nil) != (c.want == domain.IncidentResolved && c.status != c.want) {
			t.Errorf("%s with %d open: %+v %+v", c.status, c.open, in, ev)
		}
		if ev != nil && (in.StatusBy != "" || ev.Text != "all items decided") {
			t.Errorf("auto-resolve: %+v %+v", in, ev)
		}
	}
}

// TestIncident_openStates: an incident counts its open items by the state
// each entered in, lists the states of those still open in DeskStates
// order, and each decision returns a new count, leaving the incident it
// was given as it was.
func TestIncident_openStates(t *testing.T) {
	join := func(in domain.Incident, found bool, st domain.State) domain.Incident {
		out, _, _ := domain.IncidentJoined(in, found, false, domain.IncidentEntry{NewID: "inc_1", State: st, At: t0})
		return out
	}
	in := join(domain.Incident{}, false, domain.FailedTerminal)
	in = join(in, true, domain.UnknownOutcome)
	two := join(in, true, domain.UnknownOutcome)
	if in.OpenIn[domain.UnknownOutcome] != 1 || two.OpenIn[domain.UnknownOutcome] != 2 {
		t.Fatalf("a join changed the incident it was given: %v, then %v", in.OpenIn, two.OpenIn)
	}
	if got := two.States(); !slices.Equal(got, []domain.State{domain.UnknownOutcome, domain.FailedTerminal}) {
		t.Fatalf("states %v", got)
	}
	left, _ := domain.IncidentItemLeft(two, domain.IncidentExit{State: domain.FailedTerminal, At: t0})
	if two.OpenIn[domain.FailedTerminal] != 1 || !slices.Equal(left.States(), []domain.State{domain.UnknownOutcome}) {
		t.Fatalf("the failed item left: %v, given %v", left.OpenIn, two.OpenIn)
	}
	// A leaving never counts below none.
	left, _ = domain.IncidentItemLeft(left, domain.IncidentExit{State: domain.FailedTerminal, At: t0})
	if left.OpenIn[domain.FailedTerminal] != 0 || left.OpenIn[domain.UnknownOutcome] != 2 {
		t.Fatalf("a second leaving of the failed state: %v", left.OpenIn)
	}
}
