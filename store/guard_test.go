package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestStore_refusesAChangeOnOtherContent: a change that carries no content
// snapshot leaves the content as it is, so it must find the content it
// was decided on. When the content version moved under it (at the same
// operation version, as only a write outside the Ledger can), every
// renderer refuses it as a conflict and writes nothing.
func TestStore_refusesAChangeOnOtherContent(t *testing.T) {
	ctx := context.Background()
	for _, via := range renderers {
		t.Run(via, func(t *testing.T) {
			s := storetest.New(t)
			ids := &domain.IDSource{}
			reg := newRegistration(t, ids, "evt_cv:task")
			if created, errs := store.WriteVia(s, via, []domain.Change{reg}, true); !created[0] || errs[0] != nil {
				t.Fatalf("register: %v %v", created, errs)
			}
			env := domain.Env{Card: testCards()["crm.task.create"], Now: time.Now().UTC(), Actor: wf, NewID: ids.New}
			beat, err := domain.Decide(reg.Op, domain.Heartbeat{LeaseToken: reg.Op.LeaseToken, Lease: time.Minute}, env)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Exec(ctx, s, "UPDATE operations SET content_version = content_version + 1 WHERE id = ?", reg.Op.ID); err != nil {
				t.Fatal(err)
			}
			written, errs := store.WriteVia(s, via, []domain.Change{beat}, false)
			if written[0] || (errs[0] != nil && domain.ErrorCode(errs[0]) != domain.EConflict) {
				t.Fatalf("a heartbeat decided on content version 1 of 2: written %v, %v", written[0], errs[0])
			}
			op, _, err := s.Load(ctx, "", reg.Op.ID)
			if err != nil {
				t.Fatal(err)
			}
			if op.Version != reg.Op.Version || !op.Lease.ExpiresAt.Equal(reg.Op.Lease.ExpiresAt) {
				t.Fatalf("the refused heartbeat moved the operation: version %d, lease until %v", op.Version, op.Lease.ExpiresAt)
			}
		})
	}
}
