package domain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// registerReady registers n unclaimed operations in the actor's namespace and
// returns their IDs in registration order.
func registerReady(t *testing.T, l *domain.Ledger, actor domain.Actor, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		res, err := l.Workflow.Register(context.Background(), actor, domain.Registration{Key: fmt.Sprintf("evt_pull:%d", i),
			Type: "crm.task.create", Content: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))})
		if err != nil || res.Operation.State != domain.Received {
			t.Fatalf("register %d: %+v %v", i, res.Operation, err)
		}
		ids = append(ids, res.Operation.ID)
	}
	return ids
}

func claimedIDs(claims []domain.ClaimResult) []string {
	var ids []string
	for _, c := range claims {
		ids = append(ids, c.Operation.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestStore_ClaimReady_skipsLockedRows holds one pull's transaction open on
// the first ready operation (its decide callback blocks) and checks that a
// second pull on the same namespace is handed the other ready operations
// instead of waiting for the first to commit: the promise of SKIP LOCKED.
// The deadline only tells waiting apart from working; it is generous.
func TestStore_ClaimReady_skipsLockedRows(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("needs PostgreSQL: a SQLite transaction holds the whole database")
	}
	ctx := context.Background()
	db := storetest.New(t)
	l := domain.NewLedger(db, testCards())
	ids := registerReady(t, l, wf, 3)

	held := make(chan string, 1)
	release := make(chan struct{})
	firstDone := make(chan error, 1)
	go func() {
		_, err := db.ClaimReady(ctx, domain.ReadyQuery{Namespace: wf.Namespace, Limit: 1},
			func(op domain.Operation, _ time.Time) (domain.Change, error) {
				held <- op.ID
				<-release
				return domain.Change{}, domain.Errorf(domain.ENotClaimable, "left for the other puller")
			})
		firstDone <- err
	}()
	var heldID string
	select {
	case heldID = <-held:
	case err := <-firstDone:
		t.Fatalf("the first pull ended without holding a row: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the first pull never reached its decide callback")
	}
	defer func() {
		close(release)
		if err := <-firstDone; err != nil {
			t.Errorf("the held pull: %v", err)
		}
	}()

	deadline, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	claims, err := l.Workflow.ClaimNext(deadline, wf, domain.PullClaim{Claim: domain.Claim{Worker: "second"}, Limit: 10})
	if deadline.Err() != nil {
		t.Fatalf("the second pull waited for the held row instead of skipping it (err %v)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == heldID })
	slices.Sort(want)
	if got := claimedIDs(claims); !slices.Equal(got, want) {
		t.Fatalf("second pull claimed %v, want the ready operations but the held one %s: %v", got, heldID, want)
	}
}

// TestStore_ClaimReady_staysInItsNamespace checks that a pull only ever
// hands out its own namespace's operations.
func TestStore_ClaimReady_staysInItsNamespace(t *testing.T) {
	ctx := context.Background()
	db := storetest.New(t)
	l := domain.NewLedger(db, testCards())
	other := wf
	other.Namespace = "other"
	theirs := registerReady(t, l, other, 2)
	ours := registerReady(t, l, wf, 1)

	claims, err := l.Workflow.ClaimNext(ctx, wf, domain.PullClaim{Claim: domain.Claim{Worker: "w"}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if got := claimedIDs(claims); !slices.Equal(got, ours) {
		t.Fatalf("a pull in %s claimed %v, want only %v (not %s's %v)", wf.Namespace, got, ours, other.Namespace, theirs)
	}
	for _, id := range theirs {
		op, _, err := db.Load(ctx, other.Namespace, id)
		if err != nil || op.State != domain.Received || op.Lease != nil {
			t.Fatalf("%s's operation after another namespace's pull: %+v %v", other.Namespace, op, err)
		}
	}
}
