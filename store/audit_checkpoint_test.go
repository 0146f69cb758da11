package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestCheckpoint_waitsForEarlierPositions: on PostgreSQL a transaction can
// take a write position and commit after events with later positions. A
// checkpoint taken meanwhile must neither skip that event for good nor
// cover positions it cannot see: it waits for the transaction.
func TestCheckpoint_waitsForEarlierPositions(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("SQLite has one writer: nothing commits out of position order")
	}
	ctx := context.Background()
	url := storetest.URL(t)
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	x := &auditFixture{t: t, s: s, l: domain.NewLedger(s, testCards())}
	x.trail = trailOf(x.l)
	slow := x.lifecycle("evt_slow:task")
	evs := x.events(slow)

	// A writer as the store writes: the operation row first, then the event.
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	late := forge(evs[3], 5, evs[3].Hash)
	tx, err := raw.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("UPDATE operations SET version = 5, audit_head = $1 WHERE id = $2", late.Hash, slow); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO audit_events (id, stream, seq, operation_id, namespace, at, actor_kind, action, detail, prev_hash, hash) "+
		"VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)", late.ID, late.Stream, late.Seq, late.OperationID, late.Namespace,
		late.At, late.Actor.Kind.String(), late.Action, string(late.Detail), late.PrevHash, late.Hash); err != nil {
		t.Fatal(err)
	}
	fast := x.lifecycle("evt_fast:task") // later positions, committed first
	committed := make(chan time.Time, 1)
	go func() {
		time.Sleep(300 * time.Millisecond)
		at := time.Now()
		_ = tx.Commit()
		committed <- at
	}()

	c, wrote, err := x.trail.Checkpoint(ctx)
	done := time.Now()
	if err != nil || !wrote {
		t.Fatalf("checkpoint: %v %v", wrote, err)
	}
	if at := <-committed; done.Before(at) {
		t.Fatal("the checkpoint did not wait for the transaction holding an earlier position")
	}
	heads := map[string]int64{}
	for _, h := range c.Heads {
		heads[h.Stream] = h.Seq
	}
	if heads[slow] != 5 || heads[fast] != 4 {
		t.Fatalf("heads %v: want %s at 5 and %s at 4", heads, slow, fast)
	}
}
