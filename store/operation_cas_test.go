package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestStore_Apply_refusesAStaleChange holds the store to domain.Store's
// compare-and-set on its own: a change that writes no audit event and no
// attempt — so no unique index on a side row can refuse it by accident —
// must still be refused when the operation is not at its FromVersion, and
// must leave the row as it was. Only the domain.Store interface is used, so
// the test keeps guarding whichever write path implements it.
func TestStore_Apply_refusesAStaleChange(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	var db domain.Store = s
	l := domain.NewLedger(s, testCards())
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_cas:task", Type: "crm.task.create",
		Content: json.RawMessage(`{"a":1}`), Claim: &domain.Claim{Worker: "a"}})
	if err != nil || res.Claim == nil {
		t.Fatalf("register: %+v %v", res, err)
	}
	id := res.Operation.ID

	// leaseTo is a change of op to a lease held by worker, with nothing
	// else written: no events, no attempt, no content.
	leaseTo := func(op domain.Operation, from int64, worker string) domain.Change {
		n := op
		n.Version = op.Version + 1
		n.UpdatedAt = op.UpdatedAt.Add(time.Second)
		l := *op.Lease
		l.Worker = worker
		n.Lease = &l
		return domain.Change{Op: n, FromVersion: from}
	}

	seen, _, err := db.Load(ctx, "", id)
	if err != nil {
		t.Fatal(err)
	}
	// Another writer moves the operation on from the version seen.
	if err := db.Apply(ctx, leaseTo(seen, seen.Version, "a")); err != nil {
		t.Fatalf("a change from the current version without side rows: %v", err)
	}
	current, _, err := db.Load(ctx, "", id)
	if err != nil {
		t.Fatal(err)
	}
	if current.Version != seen.Version+1 {
		t.Fatalf("the current change did not apply: version %d, want %d", current.Version, seen.Version+1)
	}

	// On PostgreSQL a change carrying a notification takes the transaction
	// path rather than the single statement; each must refuse on its own.
	withNotification := func(ch domain.Change) domain.Change {
		ch.Notifications = []domain.Notification{{ID: "msg_cas_" + ch.Op.ID, OperationID: ch.Op.ID,
			Namespace: ch.Op.Namespace, OpType: ch.Op.Type, Type: "operation.handed_off",
			Destination: domain.Destination{URL: "https://hooks.example.com/x", Format: domain.FormatStandard},
			CreatedAt:   ch.Op.UpdatedAt}}
		return ch
	}
	for _, tc := range []struct {
		name string
		from int64
		with func(domain.Change) domain.Change
	}{
		{"behind", seen.Version, nil},       // decided on the version before
		{"ahead", current.Version + 1, nil}, // a version the row never had
		{"behind_in_a_transaction", seen.Version, withNotification},
		{"ahead_in_a_transaction", current.Version + 1, withNotification},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stale := leaseTo(seen, tc.from, "b")
			if tc.with != nil {
				stale = tc.with(stale)
			}
			if err := db.Apply(ctx, stale); domain.ErrorCode(err) != domain.EConflict {
				t.Fatalf("Apply from version %d of an operation at %d: err = %v, want %s", tc.from, current.Version, err, domain.EConflict)
			}
			after, _, err := db.Load(ctx, "", id)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(after, current) {
				t.Fatalf("a refused change altered the row:\n got %+v (lease %+v)\nwant %+v (lease %+v)", after, after.Lease, current, current.Lease)
			}
		})
	}
}
