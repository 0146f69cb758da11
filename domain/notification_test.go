package domain_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// notifyCard sends to two destinations and escalates after 30 minutes.
func notifyCard() domain.Card {
	c := testCard()
	c.NotifyURL = ""
	c.Notify = []domain.Destination{{URL: "https://hooks.example.com/a", SecretEnv: "A_SECRET", Format: domain.FormatStandard},
		{URL: "https://hooks.slack.com/services/x", Format: domain.FormatSlack, Events: "*"}} // every kind, not Slack's default
	c.EscalateAfter = 30 * time.Minute
	c.Escalate = []domain.Destination{{URL: "https://pager.example.com/", Format: domain.FormatStandard}}
	return c
}

func decideOK(t *testing.T, op domain.Operation, cmd domain.Command, env domain.Env) domain.Change {
	t.Helper()
	ch, err := domain.Decide(op, cmd, env)
	if err != nil {
		t.Fatalf("%T from %s: %v", cmd, op.State, err)
	}
	return ch
}

func summaryOf(t *testing.T, n domain.Notification) domain.NotificationSummary {
	t.Helper()
	return n.Summary
}

// TestEnteringTheDeskNotifiesEveryDestination: a lease lost after begin puts
// the operation in unknown_outcome; the change carries one handed_off
// notification per destination, with the summary and no content.
func TestEnteringTheDeskNotifiesEveryDestination(t *testing.T) {
	card := notifyCard()
	ch := decideOK(t, fixture(domain.ActionPending), domain.ExpireLease{}, newEnv(card, leaseExpired, domain.System))
	if ch.Op.State != domain.UnknownOutcome || len(ch.Notifications) != 2 {
		t.Fatalf("state %s, %d notifications; want unknown_outcome and 2", ch.Op.State, len(ch.Notifications))
	}
	if ch.DeskEntry != "lease_expired" || ch.Op.DeskEnteredAt == nil || !ch.Op.DeskEnteredAt.Equal(leaseExpired) {
		t.Fatalf("desk entry %q at %v", ch.DeskEntry, ch.Op.DeskEnteredAt)
	}
	ids := map[string]bool{}
	for i, n := range ch.Notifications {
		if n.Type != domain.NotifyHandedOff || n.Destination != card.Notify[i] || n.OperationID != ch.Op.ID {
			t.Fatalf("notification %d: %+v", i, n)
		}
		ids[n.ID] = true
		s := summaryOf(t, n)
		if s.State != "unknown_outcome" || s.Reason != "lease_expired" || s.Provider != "acme-crm" || s.Attempts != 3 ||
			s.LastError == nil || s.LastError.Code != "lease_expired" || s.AgeSeconds != int64(leaseExpired.Sub(ch.Op.CreatedAt).Seconds()) ||
			s.DeskPath != "/desk/operations/op_01TEST" || s.ProviderKey != ch.Op.ProviderKey ||
			s.EnteredDeskAt == nil || !s.EnteredDeskAt.Equal(*ch.Op.DeskEnteredAt) {
			t.Fatalf("summary: %+v", s)
		}
		if s.Content != nil || s.ResultData != nil {
			t.Fatalf("content sent without the card opting in: %+v", n.Summary)
		}
	}
	if len(ids) != 2 {
		t.Fatalf("notification ids not distinct: %v", ids)
	}
	// Opting in adds the content.
	card.NotifyIncludeData = true
	ch = decideOK(t, fixture(domain.ActionPending), domain.ExpireLease{}, newEnv(card, leaseExpired, domain.System))
	if s := summaryOf(t, ch.Notifications[0]); string(s.Content) != fixtureContent {
		t.Fatalf("content = %s, want the operation's", s.Content)
	}
}

// TestWhatNotifies walks the transitions that concern a person and those
// that do not.
func TestWhatNotifies(t *testing.T) {
	card := notifyCard()
	cases := []struct {
		name  string
		from  domain.State
		cmd   domain.Command
		actor domain.Actor
		now   time.Time
		types []string
	}{
		{"exhausted retries", domain.FailedRetryable, domain.Exhaust{}, domain.System, elapsedPassed, []string{domain.NotifyHandedOff}},
		{"terminal error", domain.ActionPending, domain.Settle{LeaseToken: 3, Outcome: domain.OutcomeFailedTerminal,
			Error: &domain.ErrorInfo{Class: domain.ClassValidation, Code: "bad"}}, workflow, t0, []string{domain.NotifyHandedOff}},
		{"claim", domain.Received, domain.Claim{Worker: "w"}, workflow, t0, nil},
		{"retryable error", domain.ActionPending, domain.Settle{LeaseToken: 3, Outcome: domain.OutcomeFailedRetryable,
			Error: &domain.ErrorInfo{Class: domain.ClassRateLimited}}, workflow, t0, nil},
		{"person retries", domain.FailedTerminal, domain.Resolve{Action: domain.ResolveRetry, Reason: "fixed"}, alice, t0,
			[]string{domain.NotifyResolved}},
		{"person revises", domain.FailedTerminal, domain.Revise{Content: json.RawMessage(revisedContent), Reason: "fix"}, alice, t0,
			[]string{domain.NotifyResolved, domain.NotifyApprovalRequested}},
		{"approval", domain.AwaitingApproval, domain.Approve{ContentVersion: 2, Reason: "ok"}, carol, t0, []string{domain.NotifyResolved}},
		{"note", domain.UnknownOutcome, domain.Note{Text: "looking"}, alice, t0, nil},
		{"assign", domain.UnknownOutcome, domain.Assign{To: alice.Person(), Reason: "mine"}, alice, t0, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := decideOK(t, fixture(c.from), c.cmd, newEnv(card, c.now, c.actor))
			var got []string
			for i, n := range ch.Notifications {
				if i%2 == 0 {
					got = append(got, n.Type)
				}
			}
			if len(got) != len(c.types) {
				t.Fatalf("notifications %v, want %v", got, c.types)
			}
			for i := range got {
				if got[i] != c.types[i] {
					t.Fatalf("notifications %v, want %v", got, c.types)
				}
			}
		})
	}
}

// TestRegisteringForApprovalNotifies: a card that requires approval hands
// the new operation to an approver.
func TestRegisteringForApprovalNotifies(t *testing.T) {
	card := notifyCard()
	card.RequiresApproval = true
	ch, err := domain.NewOperation(domain.Registration{Namespace: "ns", Key: "k", Type: card.Name}, []byte(`{}`), false,
		newEnv(card, t0, workflow))
	if err != nil {
		t.Fatal(err)
	}
	if len(ch.Notifications) != 2 || ch.Notifications[0].Type != domain.NotifyApprovalRequested ||
		summaryOf(t, ch.Notifications[0]).Reason != "requires_approval" {
		t.Fatalf("notifications: %+v", ch.Notifications)
	}
}

// TestEscalationWithAFakeClock: an unassigned desk item escalates once the
// card's escalate_after has passed since it entered the desk, to the
// escalate destinations, and only once; an assigned one never does.
func TestEscalationWithAFakeClock(t *testing.T) {
	card := notifyCard()
	entered := decideOK(t, fixture(domain.ActionPending), domain.ExpireLease{}, newEnv(card, leaseExpired, domain.System)).Op
	early := leaseExpired.Add(29 * time.Minute)
	due := leaseExpired.Add(30 * time.Minute)
	if domain.EscalationDue(entered, card, early) {
		t.Fatal("escalation due before escalate_after")
	}
	if _, err := domain.Decide(entered, domain.Escalate{}, newEnv(card, early, domain.System)); domain.ErrorCode(err) != domain.EInvalidTransition {
		t.Fatalf("escalating early: %v", err)
	}
	if !domain.EscalationDue(entered, card, due) {
		t.Fatal("escalation not due after escalate_after")
	}
	ch := decideOK(t, entered, domain.Escalate{}, newEnv(card, due, domain.System))
	if len(ch.Notifications) != 1 || ch.Notifications[0].Type != domain.NotifyEscalated ||
		ch.Notifications[0].Destination.URL != "https://pager.example.com/" || ch.Op.EscalatedAt == nil {
		t.Fatalf("escalation: %+v", ch.Notifications)
	}
	if domain.EscalationDue(ch.Op, card, due.Add(time.Hour)) {
		t.Fatal("escalated twice")
	}
	assigned := decideOK(t, entered, domain.Assign{To: alice.Person(), Reason: "mine"}, newEnv(card, early, alice)).Op
	if domain.EscalationDue(assigned, card, due.Add(time.Hour)) {
		t.Fatal("an assigned item escalated")
	}
	if assigned.AssignedAt == nil || !assigned.AssignedAt.Equal(early) {
		t.Fatalf("assigned at %v, want %v", assigned.AssignedAt, early)
	}
	// Resolved: off the desk, nothing left to escalate, and the desk clock
	// goes with the decision.
	resolved := decideOK(t, assigned, domain.Resolve{Action: domain.ResolveConfirmExecuted, Result: &domain.Result{Ref: "r"}, Reason: "found it"},
		newEnv(card, due, alice))
	if resolved.LeftDesk == nil || !resolved.LeftDesk.EnteredAt.Equal(leaseExpired) || !resolved.LeftDesk.AssignedAt.Equal(early) ||
		resolved.LeftDesk.Decision != "confirm_executed" || !resolved.LeftDesk.ByPerson {
		t.Fatalf("left desk: %+v", resolved.LeftDesk)
	}
	if domain.EscalationDue(resolved.Op, card, due.Add(time.Hour)) || resolved.Op.AssignedAt != nil {
		t.Fatal("a resolved item can escalate")
	}
	// Without escalate_after nothing escalates.
	card.EscalateAfter = 0
	if domain.EscalationDue(entered, card, due.Add(time.Hour)) {
		t.Fatal("escalated without escalate_after")
	}
}

// TestJudgeDelivery: 2xx delivers; 5xx, 429 and no answer retry with
// backoff under the jitter, a Retry-After is waited out; other answers and
// refused destinations fail; retries stop after MaxAge.
func TestJudgeDelivery(t *testing.T) {
	p := domain.DeliveryPolicy{Base: 4 * time.Second, Max: time.Minute, MaxAge: time.Hour}
	half := func() float64 { return 0.5 }
	cases := []struct {
		r       domain.DeliveryResult
		n       int
		outcome string
		wait    time.Duration
	}{
		{domain.DeliveryResult{StatusCode: 204}, 1, domain.DeliveryDelivered, 0},
		{domain.DeliveryResult{StatusCode: 500}, 1, domain.DeliveryRetry, 2 * time.Second},
		{domain.DeliveryResult{StatusCode: 503}, 3, domain.DeliveryRetry, 8 * time.Second},
		{domain.DeliveryResult{StatusCode: 502}, 30, domain.DeliveryRetry, 30 * time.Second},
		{domain.DeliveryResult{Err: "timeout"}, 2, domain.DeliveryRetry, 4 * time.Second},
		{domain.DeliveryResult{StatusCode: 429, RetryAfter: 5 * time.Second}, 1, domain.DeliveryRetry, 5 * time.Second},
		{domain.DeliveryResult{StatusCode: 404}, 1, domain.DeliveryFailed, 0},
		{domain.DeliveryResult{StatusCode: 301}, 1, domain.DeliveryFailed, 0},
		{domain.DeliveryResult{Err: "private address", Refused: true}, 1, domain.DeliveryFailed, 0},
	}
	for _, c := range cases {
		outcome, next := domain.JudgeDelivery(c.r, c.n, t0, t0, p, half)
		if outcome != c.outcome || (c.outcome == domain.DeliveryRetry && next.Sub(t0) != c.wait) {
			t.Errorf("%+v attempt %d: %s after %v, want %s after %v", c.r, c.n, outcome, next.Sub(t0), c.outcome, c.wait)
		}
	}
	if outcome, _ := domain.JudgeDelivery(domain.DeliveryResult{StatusCode: 500}, 2, t0, t0.Add(time.Hour), p, half); outcome != domain.DeliveryFailed {
		t.Errorf("retried past MaxAge: %s", outcome)
	}
}

// TestDrillOperationsNeverNotify: the same transitions that hand off,
// request approval, resolve and escalate notify nobody when the operation
// is in the drill namespace, while the desk clock moves as for any other.
func TestDrillOperationsNeverNotify(t *testing.T) {
	card := notifyCard()
	card.RequiresApproval = true
	drilled := func(s domain.State) domain.Operation {
		op := fixture(s)
		op.Namespace = domain.DrillNamespace
		return op
	}
	steps := []struct {
		name  string
		from  domain.State
		cmd   domain.Command
		actor domain.Actor
		now   time.Time
	}{
		{"lease lost after begin", domain.ActionPending, domain.ExpireLease{}, domain.System, leaseExpired},
		{"exhausted retries", domain.FailedRetryable, domain.Exhaust{}, domain.System, elapsedPassed},
		{"person revises", domain.FailedTerminal, domain.Revise{Content: json.RawMessage(revisedContent), Reason: "fix"}, alice, t0},
		{"approval", domain.AwaitingApproval, domain.Approve{ContentVersion: 2, Reason: "ok"}, carol, t0},
	}
	for _, s := range steps {
		if n := len(decideOK(t, fixture(s.from), s.cmd, newEnv(card, s.now, s.actor)).Notifications); n == 0 {
			t.Fatalf("%s: outside the drill namespace it notifies nobody either; the case proves nothing", s.name)
		}
		ch := decideOK(t, drilled(s.from), s.cmd, newEnv(card, s.now, s.actor))
		if len(ch.Notifications) != 0 {
			t.Fatalf("%s: a drill's operation notified: %+v", s.name, ch.Notifications)
		}
	}
	entered := decideOK(t, drilled(domain.ActionPending), domain.ExpireLease{}, newEnv(card, leaseExpired, domain.System)).Op
	if entered.DeskEnteredAt == nil {
		t.Fatal("a drill's operation entered the desk without its clock")
	}
	if ch := decideOK(t, entered, domain.Escalate{}, newEnv(card, leaseExpired.Add(time.Hour), domain.System)); len(ch.Notifications) != 0 ||
		ch.Op.EscalatedAt == nil {
		t.Fatalf("a drill's escalation: %+v, escalated at %v", ch.Notifications, ch.Op.EscalatedAt)
	}
	reg, err := domain.NewOperation(domain.Registration{Namespace: domain.DrillNamespace, Key: "k", Type: card.Name}, []byte(`{}`), false,
		newEnv(card, t0, domain.Actor{Kind: domain.ActorWorkflow, Name: "drill", Namespace: domain.DrillNamespace}))
	if err != nil || reg.Op.State != domain.AwaitingApproval || len(reg.Notifications) != 0 {
		t.Fatalf("a drill's registration for approval: %s, %+v, %v", reg.Op.State, reg.Notifications, err)
	}
}

// Destinations take the kinds they list, or their format's default: a
// Slack channel is paged per incident, a standard destination gets all.
func TestDestination_Takes(t *testing.T) {
	slack := domain.Destination{URL: "https://hooks.slack.com/services/x", Format: domain.FormatSlack}
	std := domain.Destination{URL: "https://ops.example.com/h", Format: domain.FormatStandard}
	listed := domain.Destination{URL: "https://pager.example.com/h", Format: domain.FormatStandard, Events: "incident.*,operation.escalated"}
	for _, tc := range []struct {
		d     domain.Destination
		kind  string
		takes bool
	}{
		{slack, domain.NotifyHandedOff, false}, {slack, domain.NotifyIncidentOpened, true}, {slack, domain.NotifyIncidentGrew, true},
		{slack, domain.NotifyEscalated, true}, {slack, domain.NotifyResolved, true},
		{std, domain.NotifyHandedOff, true}, {std, domain.NotifyIncidentGrew, true},
		{listed, domain.NotifyHandedOff, false}, {listed, domain.NotifyResolved, false}, {listed, domain.NotifyIncidentOpened, true},
		{listed, domain.NotifyEscalated, true},
	} {
		if got := tc.d.Takes(tc.kind); got != tc.takes {
			t.Errorf("%s (%s) takes %s: %v", tc.d.URL, tc.d.Events, tc.kind, got)
		}
	}
	c := notifyCard()
	for _, bad := range []string{"incident", "operation.handed_of", "ops.*", "incident.opened,"} {
		c.Notify[0].Events = bad
		if errs := c.Validate(); len(errs) == 0 {
			t.Errorf("events %q accepted", bad)
		}
	}
	c.Notify[0].Events = "incident.*,operation.escalated,*"
	if errs := c.Validate(); len(errs) != 0 {
		t.Errorf("valid events refused: %v", errs)
	}
}
