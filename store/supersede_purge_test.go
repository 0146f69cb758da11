package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/audit"
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
		orig, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("orig-%d", i), Type: "coupon.issue",
			Content: json.RawMessage(`{"email":"ada@example.com"}`)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Desk.Reject(ctx, approver, orig.Operation.ID, domain.Reject{ContentVersion: 1, Reason: "no"}); err != nil {
			t.Fatal(err)
		}
		repl, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("repl-%d", i), Type: "crm.task.create",
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
	rep, err := audit.NewTrail(a).VerifyDB(ctx, &audit.Verifier{})
	if err != nil || !rep.OK() {
		t.Fatalf("audit trail: %+v %v", rep, err)
	}
}

// TestGroupCommit_staleNoteKeepsResultDataPurged: a note decided on a
// completed operation before its content was purged shares a multi-row
// statement with three settles that write result data. The statement
// writes the union of its changes' columns, so the note's row sends its
// result data as it was decided on; it must not bring the purged data back.
func TestGroupCommit_staleNoteKeepsResultDataPurged(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	settle := func(id string) domain.Settle {
		return domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeCompleted,
			Result: &domain.Result{Ref: "crm_" + id, Data: json.RawMessage(`{"owner":"ada@example.com"}`)}}
	}
	begun := func(key string) domain.Operation {
		op := registerClaimed(t, l, key)
		if _, err := l.Workflow.Begin(ctx, wf, op.ID, domain.Begin{LeaseToken: 1}); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.Load(ctx, "", op.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	done := begun("evt_done:task")
	if _, err := l.Workflow.Settle(ctx, wf, done.ID, settle(done.ID)); err != nil {
		t.Fatal(err)
	}
	stale, _, err := s.Load(ctx, "", done.ID)
	if err != nil || stale.Result == nil || len(stale.Result.Data) == 0 {
		t.Fatalf("completed: %+v %v", stale.Result, err)
	}
	if n, err := s.PurgeContent(ctx, time.Now().Add(time.Hour), 10); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	ids := &domain.IDSource{}
	env := func(actor domain.Actor) domain.Env {
		return domain.Env{Card: testCards()["crm.task.create"], Now: time.Now().UTC().Truncate(time.Microsecond),
			Actor: actor, NewID: ids.New, Jitter: func() float64 { return 0 }}
	}
	note, err := domain.Decide(stale, domain.Note{Text: "checked with the customer"}, env(approver))
	if err != nil {
		t.Fatal(err)
	}
	batch := []domain.Change{note}
	for i := range 3 {
		op := begun(fmt.Sprintf("evt_%d:task", i))
		ch, err := domain.Decide(op, settle(op.ID), env(wf))
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, ch)
	}
	if got := store.MultiRow(batch, false); len(got) != 1 || got[0] != len(batch) {
		t.Fatalf("the flush is sent as %v, not as one multi-row statement", got)
	}
	written, errs := store.ApplyTogether(s, batch)
	for i := range batch {
		if !written[i] || errs[i] != nil {
			t.Fatalf("change %d: written %v, %v", i, written[i], errs[i])
		}
	}
	got, _, err := s.Load(ctx, "", done.ID)
	if err != nil || got.Version != note.Op.Version || got.Result == nil || got.Result.Ref != "crm_"+done.ID {
		t.Fatalf("after the note: %+v %v", got, err)
	}
	if len(got.Result.Data) != 0 || len(got.Content) != 0 {
		t.Fatalf("the stale note wrote purged data back: result data %s, content %s", got.Result.Data, got.Content)
	}
}
