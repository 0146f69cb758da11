package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestOutboxSummary_readsStoredRows: a summary column as the outbox has
// always kept it reads back to the facts it holds, and one that is not
// JSON reads back as unreadable — that notification only, not the
// operation's other ones — so delivery refuses it instead of sending an
// empty body or stalling.
func TestOutboxSummary_readsStoredRows(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, notifyCards())
	op := toDesk(t, l, "k-summary")
	if _, err := l.Desk.Resolve(ctx, dave, op.ID, domain.Resolve{Action: domain.ResolveConfirmExecuted,
		Result: &domain.Result{Ref: "r"}, Reason: "seen"}); err != nil {
		t.Fatal(err)
	}
	ns, err := st.Notifications(ctx, op.ID)
	ns = itemNotices(ns)
	if err != nil || len(ns) != 2 {
		t.Fatalf("outbox: %d %v", len(ns), err)
	}
	if ns[0].Unreadable != nil || ns[0].Summary.ID != op.ID || ns[0].Summary.LastError == nil ||
		ns[0].Summary.LastError.Code != "read_timeout" || ns[0].Summary.DeskPath != "/desk/operations/"+op.ID {
		t.Fatalf("written summary read back as %+v (%v)", ns[0].Summary, ns[0].Unreadable)
	}

	stored := `{"id":"op_x","key":"k","type":"crm.task.create","namespace":"campaigns","state":"completed",` +
		`"reason":"confirm_executed","last_error":{"class":"timeout","code":"read_timeout","message":"slow"},"attempts":1,` +
		`"provider":"acme-crm","provider_key":"pk","age_seconds":7,"entered_desk_at":"2026-03-01T12:00:00Z","assignee":"ann","desk_path":"/desk/operations/op_x",` +
		`"decision":"confirm_executed","decided_by":"dave","content":{"a":1},"result_ref":"r","result_data":{"b":2}}`
	if err := store.Exec(ctx, st, "UPDATE notifications SET summary = ? WHERE id = ?", stored, ns[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := store.Exec(ctx, st, "UPDATE notifications SET summary = ? WHERE id = ?", "not json", ns[1].ID); err != nil {
		t.Fatal(err)
	}
	ns, err = st.Notifications(ctx, op.ID)
	ns = itemNotices(ns)
	if err != nil || len(ns) != 2 {
		t.Fatalf("outbox after the edit: %d %v", len(ns), err)
	}
	entered := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	want := domain.NotificationSummary{ID: "op_x", Key: "k", Type: "crm.task.create", Namespace: "campaigns", State: "completed",
		Reason: "confirm_executed", LastError: &domain.NotifiedError{Class: "timeout", Code: "read_timeout", Message: "slow"},
		Attempts: 1, Provider: "acme-crm", ProviderKey: "pk", AgeSeconds: 7, EnteredDeskAt: &entered, Assignee: "ann", DeskPath: "/desk/operations/op_x",
		Decision: "confirm_executed", DecidedBy: "dave", Content: json.RawMessage(`{"a":1}`), ResultRef: "r",
		ResultData: json.RawMessage(`{"b":2}`)}
	if ns[0].Unreadable != nil || !reflect.DeepEqual(ns[0].Summary, want) {
		t.Fatalf("stored summary read back as %+v (%v)", ns[0].Summary, ns[0].Unreadable)
	}
	if ns[1].Unreadable == nil {
		t.Fatalf("a summary that is not JSON read back as %+v", ns[1].Summary)
	}
}

func notifyCards() domain.Cards {
	cs := testCards()
	for name, c := range cs {
		c.Notify = []domain.Destination{{URL: "https://hooks.example.com/" + name, SecretEnv: "S", Format: domain.FormatStandard}}
		c.EscalateAfter = 30 * time.Minute
		c.Escalate = []domain.Destination{{URL: "https://pager.example.com/", Format: domain.FormatStandard}}
		cs[name] = c
	}
	return cs
}

var dave = domain.Actor{Kind: domain.ActorPerson, Name: "dave", Email: "dave@example.com", Role: domain.RoleAdmin}

// itemNotices leaves out the notices of the item's incident
// (incident_entry.go): the tests of an item's own notifications count
// those.
func itemNotices(ns []domain.NotificationRecord) []domain.NotificationRecord {
	var out []domain.NotificationRecord
	for _, n := range ns {
		if n.Summary.Incident == nil {
			out = append(out, n)
		}
	}
	return out
}

// toDesk registers an operation and settles it as unknown_outcome.
func toDesk(t *testing.T, l *domain.Ledger, key string) domain.Operation {
	t.Helper()
	ctx := context.Background()
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create", Content: json.RawMessage(`{"a":"` + key + `"}`),
		Claim: &domain.Claim{Worker: "w"}})
	if err != nil || res.Claim == nil {
		t.Fatalf("register: %+v %v", res, err)
	}
	tok := res.Claim.Lease.Token
	if _, err := l.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: tok}); err != nil {
		t.Fatal(err)
	}
	op, err := l.Workflow.Settle(ctx, wf, res.Operation.ID, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Code: "read_timeout"}})
	if err != nil || op.State != domain.UnknownOutcome {
		t.Fatalf("settle: %s %v", op.State, err)
	}
	return op
}
