package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// purgeBeforeSupersede is a replica's store whose supersede writes are
// preceded by another replica's content purge: the widest window between
// the registration loading the cancelled original and linking it.
type purgeBeforeSupersede struct {
	*store.Store
	other *store.Store
	t     *testing.T
}

func (s purgeBeforeSupersede) Create(ctx context.Context, ch domain.Change) (domain.Operation, bool, error) {
	if ch.Superseded != nil {
		if n, err := s.other.PurgeContent(ctx, time.Now().Add(time.Hour), 100); err != nil || n == 0 {
			s.t.Errorf("the other replica's purge: %d operations, %v", n, err)
		}
	}
	return s.Store.Create(ctx, ch)
}

// TestSupersede_racingPurgeKeepsContentPurged: 50 cancelled originals are
// each superseded while another replica purges the original's content
// between the registration's load and its write. The link is written and
// the content stays purged: the supersede writes only what it changes.
func TestSupersede_racingPurgeKeepsContentPurged(t *testing.T) {
	ctx := context.Background()
	url := storetest.URL(t)
	open := func() *store.Store {
		s, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	l := domain.NewLedger(purgeBeforeSupersede{a, b, t}, testCards())
	const n = 50
	leaked := 0
	for i := range n {
		orig, err := l.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("orig-%d", i), Type: "coupon.issue",
			Content: json.RawMessage(`{"email":"ada@example.com"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Reject(ctx, approver, orig.Operation.ID, domain.Reject{ContentVersion: 1, Reason: "no"}); err != nil {
			t.Fatal(err)
		}
		repl, err := l.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("repl-%d", i), Type: "crm.task.create",
			Content: json.RawMessage(`{"n":1}`), Supersedes: orig.Operation.ID})
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := a.Load(ctx, "", orig.Operation.ID)
		if err != nil || got.SupersededBy != repl.Operation.ID || got.ContentPurgedAt == nil {
			t.Fatalf("original after the supersede: %+v %v", got, err)
		}
		if strings.Contains(string(got.Content), "ada@example.com") {
			leaked++
		}
	}
	if leaked > 0 {
		t.Fatalf("%d of %d superseded originals hold their purged content again", leaked, n)
	}
	rep, err := domain.NewAuditTrail(a).VerifyDB(ctx, &domain.Verifier{})
	if err != nil || !rep.OK() {
		t.Fatalf("audit trail: %+v %v", rep, err)
	}
}
