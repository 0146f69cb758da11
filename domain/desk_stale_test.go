package domain_test

import (
	"context"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestLedger_StaleOnlyOnStateContentOrApproval: a decision taken on a page
// loaded before someone else's note or assignment stands; one taken before
// someone else's decision is refused, and the refusal says who changed what.
// Two people taking the same item still conflict.
func TestLedger_StaleOnlyOnStateContentOrApproval(t *testing.T) {
	ctx := context.Background()
	l := domain.NewLedger(storetest.New(t), testCards())
	op := intoDesk(t, l, "evt_stale:a", false)
	seen := op.Version

	if _, err := l.Desk.AddNote(ctx, operator, op.ID, domain.Note{Text: "asked the CRM team"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Desk.Assign(ctx, operator, op.ID, domain.Assign{To: operator.Person(), Reason: "mine", ExpectedVersion: seen + 1}); err != nil {
		t.Fatal(err)
	}
	// Another take on the page loaded before olga's: refused, naming her assignment.
	_, err := l.Desk.Assign(ctx, ada, op.ID, domain.Assign{To: ada.Person(), Reason: "took it", ExpectedVersion: seen})
	e := domain.AsError(err)
	if e.Code != domain.EVersionConflict || len(e.Changes) != 2 || e.Changes[1].Action != "assigned" ||
		e.Changes[1].Actor.Email != "olga@example.com" {
		t.Fatalf("second take: %v %+v", err, e.Changes)
	}
	// A retry on that same old page: the note and the assignment leave it standing.
	got, err := l.Desk.Resolve(ctx, ada, op.ID, domain.Resolve{Action: domain.ResolveRetry, Reason: "owner fixed", ExpectedVersion: seen})
	if err != nil || got.State != domain.Received {
		t.Fatalf("retry after a note and an assignment: %+v %v", got, err)
	}
	// A cancel on the old page comes after a decision: refused, naming it.
	_, err = l.Desk.Resolve(ctx, operator, op.ID, domain.Resolve{Action: domain.ResolveCancel, Reason: "not needed", ExpectedVersion: seen})
	e = domain.AsError(err)
	last := e.Changes[len(e.Changes)-1]
	if e.Code != domain.EVersionConflict || last.Action != "resolved" || last.Actor.Email != "ada@example.com" {
		t.Fatalf("cancel after a retry: %v %+v", err, e.Changes)
	}
	if now, _, _ := l.Store.Load(ctx, "", op.ID); now.State != domain.Received {
		t.Fatalf("the stale cancel changed the operation: %s", now.State)
	}
}
