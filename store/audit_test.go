package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

func TestListAudit_filtersAndPages(t *testing.T) {
	ctx := context.Background()
	x := newAuditFixture(t)
	ops := []string{x.lifecycle("evt_1:task"), x.lifecycle("evt_2:task")}
	// The workflow's token, as auth knows it: a workflow actor is a token's
	// name, and the actor filter finds a workflow's events through it.
	if err := x.s.CreateToken(ctx, domain.APIToken{ID: "tok_1", Namespace: wf.Namespace, Name: wf.Name, Hash: "h1", CreatedAt: time.Now()},
		domain.SystemEvent(ctx, x.l.IDs, x.l.Now(), domain.System, "token_created", "", map[string]any{"token_id": "tok_1"})); err != nil {
		t.Fatal(err)
	}
	other := wf
	other.Namespace = "other"
	if _, err := x.l.Workflow.Register(ctx, other, domain.Registration{Key: "k", Type: "crm.task.create", Content: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}

	var all []domain.AuditEvent
	cursor := ""
	for page := 0; ; page++ {
		evs, next, err := x.s.ListAudit(ctx, domain.AuditSelect{AuditQuery: domain.AuditQuery{Limit: 3, Cursor: cursor}})
		if err != nil || page > 10 {
			t.Fatal(err, page)
		}
		all = append(all, evs...)
		if cursor = next; cursor == "" {
			break
		}
	}
	if len(all) != 10 || all[0].Stream != ops[0] || all[0].Seq != 1 || all[8].Stream != domain.SystemStream {
		t.Fatalf("pages in write order: %d events, first %s/%d", len(all), all[0].Stream, all[0].Seq)
	}
	count := func(q domain.AuditSelect) int {
		t.Helper()
		q.Limit = 200
		evs, _, err := x.s.ListAudit(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}
	q := func(f func(*domain.AuditSelect)) domain.AuditSelect { var s domain.AuditSelect; f(&s); return s }
	for name, c := range map[string]struct {
		q    domain.AuditSelect
		want int
	}{
		"operation":             {q(func(s *domain.AuditSelect) { s.OperationID = ops[1] }), 4},
		"action":                {q(func(s *domain.AuditSelect) { s.Action = "settled" }), 2},
		"actor":                 {q(func(s *domain.AuditSelect) { s.Actor = "w" }), 9},
		"system actor":          {q(func(s *domain.AuditSelect) { s.Actor = domain.System.Name }), 1},
		"unknown actor":         {q(func(s *domain.AuditSelect) { s.Actor = "nobody" }), 0},
		"decision":              {q(func(s *domain.AuditSelect) { s.Action = "token_created" }), 1},
		"namespace":             {q(func(s *domain.AuditSelect) { s.Namespace = "campaigns" }), 8},
		"namespace with system": {q(func(s *domain.AuditSelect) { s.Namespace = "other"; s.WithSystem = true }), 2},
		"from the future":       {q(func(s *domain.AuditSelect) { s.From = time.Now().Add(time.Hour) }), 0},
		"until the future":      {q(func(s *domain.AuditSelect) { s.To = time.Now().Add(time.Hour) }), 10},
	} {
		if got := count(c.q); got != c.want {
			t.Errorf("%s: %d events, want %d", name, got, c.want)
		}
	}
	if _, _, err := x.s.ListAudit(ctx, domain.AuditSelect{AuditQuery: domain.AuditQuery{Cursor: "bogus"}}); domain.ErrorCode(err) != domain.EInvalid {
		t.Fatalf("bad cursor: %v", err)
	}
}

// TestListAudit_timeRangePages: a page with a time range comes in time
// order and its cursors walk the range exactly once, on both databases'
// time formats; a cursor of the other order is refused.
func TestListAudit_timeRangePages(t *testing.T) {
	ctx := context.Background()
	x := newAuditFixture(t)
	x.lifecycle("evt_1:task")
	x.lifecycle("evt_2:task")
	x.system("token_created")
	from := time.Now().Add(-time.Hour)
	var all []domain.AuditEvent
	cursor, plain := "", ""
	for page := 0; ; page++ {
		evs, next, err := x.s.ListAudit(ctx, domain.AuditSelect{AuditQuery: domain.AuditQuery{From: from, Limit: 2, Cursor: cursor}, WithSystem: true})
		if err != nil || page > 10 {
			t.Fatal(err, page)
		}
		all = append(all, evs...)
		if cursor = next; cursor == "" {
			break
		}
	}
	seen := map[string]bool{}
	for i, e := range all {
		if seen[e.ID] || (i > 0 && e.At.Before(all[i-1].At)) {
			t.Fatalf("event %d (%s at %s) repeated or out of time order", i, e.ID, e.At)
		}
		seen[e.ID] = true
	}
	if len(all) != 9 {
		t.Fatalf("%d events in the range, want 9", len(all))
	}
	if _, plain, _ = x.s.ListAudit(ctx, domain.AuditSelect{AuditQuery: domain.AuditQuery{Limit: 2}}); plain == "" {
		t.Fatal("no cursor on a page in write order")
	}
	_, _, err := x.s.ListAudit(ctx, domain.AuditSelect{AuditQuery: domain.AuditQuery{From: from, Cursor: plain}})
	if domain.ErrorCode(err) != domain.EInvalid {
		t.Fatalf("a write-order cursor on a time range: %v", err)
	}
}

// TestEachAudit_streamsInBatches: more events than one batch, in write
// order and in stream order with the system stream first.
func TestEachAudit_streamsInBatches(t *testing.T) {
	ctx := context.Background()
	x := newAuditFixture(t)
	if err := x.s.SeedSyntheticAudit(ctx, 2500); err != nil {
		t.Fatal(err)
	}
	x.system("token_created")
	var pos []string
	err := x.s.EachAudit(ctx, domain.AuditSelect{}, func(e domain.AuditEvent) error { pos = append(pos, e.ID); return nil })
	if err != nil || len(pos) != 2501 || pos[0] != "ev_seed_0" || pos[2499] != "ev_seed_2499" {
		t.Fatalf("write order: %d events %v", len(pos), err)
	}
	var last domain.AuditEvent
	n := 0
	err = x.s.EachAudit(ctx, domain.AuditSelect{ByStream: true}, func(e domain.AuditEvent) error {
		if n == 0 && e.Stream != domain.SystemStream || n > 0 && e.Stream == last.Stream && e.Seq != last.Seq+1 {
			return fmt.Errorf("event %d: %s/%d after %s/%d", n, e.Stream, e.Seq, last.Stream, last.Seq)
		}
		last, n = e, n+1
		return nil
	})
	if err != nil || n != 2501 {
		t.Fatalf("stream order: %d events %v", n, err)
	}
}

func TestCheckpoint_coversChangedStreamsOnce(t *testing.T) {
	ctx := context.Background()
	x := newAuditFixture(t)
	if _, wrote, err := x.trail.Checkpoint(ctx); wrote || err != nil {
		t.Fatalf("a checkpoint of an empty trail: %v %v", wrote, err)
	}
	for i := range audit.MaxCheckpointHeads + 5 {
		x.lifecycle(fmt.Sprintf("evt_%d:task", i))
	}
	c1, wrote, err := x.trail.Checkpoint(ctx)
	if err != nil || !wrote || c1.Seq != 1 || len(c1.Heads) != audit.MaxCheckpointHeads || c1.Root != audit.MerkleRoot(c1.Heads) {
		t.Fatalf("first checkpoint: %d heads %v %v", len(c1.Heads), wrote, err)
	}
	c2, wrote, err := x.trail.Checkpoint(ctx)
	if err != nil || !wrote || c2.Seq != 2 || len(c2.Heads) != 5 || c2.UptoPos <= c1.UptoPos {
		t.Fatalf("second checkpoint: %+v %v %v", c2, wrote, err)
	}
	for _, h := range c2.Heads {
		if h.Seq != 4 {
			t.Fatalf("head %+v is not the stream's last event", h)
		}
	}
	if _, wrote, err := x.trail.Checkpoint(ctx); wrote || err != nil {
		t.Fatalf("a checkpoint with nothing new: %v %v", wrote, err)
	}
	x.system("token_created")
	if c3, wrote, err := x.trail.Checkpoint(ctx); !wrote || err != nil || len(c3.Heads) != 0 {
		t.Fatalf("a system event alone is checkpointed by the chain: %+v %v %v", c3, wrote, err)
	}
	if rep := x.verify(); !rep.OK() || rep.Checkpoints != 3 {
		t.Fatalf("verify: %+v", rep)
	}
}

func TestPurge_onlyFinalStreamsPastRetention(t *testing.T) {
	ctx := context.Background()
	x := newAuditFixture(t)
	done := x.lifecycle("evt_1:task")
	res, err := x.l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_2:task", Type: "crm.task.create", Content: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	x.checkpoint()
	if n, err := x.trail.Purge(ctx, 0, 10); n != 0 || err != nil {
		t.Fatalf("zero retention purged %d (%v)", n, err)
	}
	if n, err := x.trail.Purge(ctx, time.Hour, 10); n != 0 || err != nil {
		t.Fatalf("purged %d streams younger than the retention (%v)", n, err)
	}
	x.trail.Now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if n, err := x.trail.Purge(ctx, time.Hour, 10); n != 1 || err != nil {
		t.Fatalf("purged %d (%v), want the completed operation's stream", n, err)
	}
	if len(x.events(done)) != 0 || len(x.events(res.Operation.ID)) != 1 {
		t.Fatal("the wrong streams were purged")
	}
	x.checkpoint()
	if rep := x.verify(); !rep.OK() {
		t.Fatalf("after the purge: %v", rep.Breaks)
	}
	store.AllowTampering(t, x.s)
	store.ExecRaw(t, x.s, "DELETE FROM audit_events WHERE stream = ?", res.Operation.ID)
	if rep := x.verify(); rep.OK() || rep.Breaks[0].Kind != audit.BreakMissingStream || rep.Breaks[0].Stream != res.Operation.ID {
		t.Fatalf("a stream deleted without a tombstone: %v", rep.Breaks)
	}
}

// TestListAudit_newestFirstPages: newest first, the desk's audit page,
// walks exactly the events write order does, backwards — in write order,
// in time order over a range, and through the actor's merged branches —
// and a cursor of the other direction is refused.
func TestListAudit_newestFirstPages(t *testing.T) {
	ctx := context.Background()
	x := newAuditFixture(t)
	x.lifecycle("evt_1:task")
	x.lifecycle("evt_2:task")
	// The workflow's token, so that the actor filter finds its events.
	if err := x.s.CreateToken(ctx, domain.APIToken{ID: "tok_1", Namespace: wf.Namespace, Name: wf.Name, Hash: "h1", CreatedAt: time.Now()},
		domain.SystemEvent(ctx, x.l.IDs, x.l.Now(), domain.System, "token_created", "", map[string]any{"token_id": "tok_1"})); err != nil {
		t.Fatal(err)
	}
	walk := func(q domain.AuditSelect) ([]string, string) {
		t.Helper()
		var ids []string
		first := ""
		for page := 0; ; page++ {
			evs, next, err := x.s.ListAudit(ctx, q)
			if err != nil || page > 20 {
				t.Fatal(err, page)
			}
			if page == 0 {
				first = next
			}
			for _, e := range evs {
				ids = append(ids, e.ID)
			}
			if q.Cursor = next; next == "" {
				return ids, first
			}
		}
	}
	from := time.Now().Add(-time.Hour)
	for name, q := range map[string]domain.AuditSelect{
		"write order": {AuditQuery: domain.AuditQuery{Limit: 2}, WithSystem: true},
		"time range":  {AuditQuery: domain.AuditQuery{Limit: 2, From: from}, WithSystem: true},
		"actor":       {AuditQuery: domain.AuditQuery{Limit: 2, Actor: wf.Name}, WithSystem: true},
	} {
		forward, oldCursor := walk(q)
		q.NewestFirst = true
		backward, newCursor := walk(q)
		slices.Reverse(backward)
		if len(forward) < 3 || !slices.Equal(forward, backward) {
			t.Errorf("%s: newest first %v, oldest first %v", name, backward, forward)
		}
		q.Cursor = oldCursor
		if _, _, err := x.s.ListAudit(ctx, q); domain.ErrorCode(err) != domain.EInvalid {
			t.Errorf("%s: an oldest-first cursor newest first: %v", name, err)
		}
		q.Cursor, q.NewestFirst = newCursor, false
		if _, _, err := x.s.ListAudit(ctx, q); domain.ErrorCode(err) != domain.EInvalid {
			t.Errorf("%s: a newest-first cursor oldest first: %v", name, err)
		}
	}
}
