package domain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestLedger_Supersede_race: many registrations race to supersede the same
// cancelled operation. Exactly one wins; the losers write nothing — not
// their operation, not a link — and the original's stream stays gap-free.
func TestLedger_Supersede_race(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	orig, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "orig", Type: "coupon.issue", Content: json.RawMessage(`{"n":0}`)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Desk.Reject(ctx, approver, orig.Operation.ID, domain.Reject{ContentVersion: 1, Reason: "no"}); err != nil {
		t.Fatal(err)
	}
	const n = 12
	var wg sync.WaitGroup
	results := make([]error, n)
	ids := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("repl-%d", i), Type: "crm.task.create",
				Content: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Supersedes: orig.Operation.ID})
			results[i], ids[i] = err, res.Operation.ID
		}()
	}
	wg.Wait()
	winner := ""
	for i, err := range results {
		switch {
		case err == nil:
			if winner != "" {
				t.Fatalf("two registrations superseded the original: %s and %s", winner, ids[i])
			}
			winner = ids[i]
		case domain.ErrorCode(err) == domain.EOriginalUnresolved:
			if _, _, err := st.LoadByKey(ctx, "campaigns", fmt.Sprintf("repl-%d", i)); domain.ErrorCode(err) != domain.ENotFound {
				t.Fatalf("a losing registration was written: %v", err)
			}
		default:
			t.Fatalf("registration %d: %v", i, err)
		}
	}
	got, _, err := st.Load(ctx, "", orig.Operation.ID)
	if err != nil || winner == "" || got.SupersededBy != winner || got.State != domain.Cancelled {
		t.Fatalf("original %+v (winner %q): %v", got, winner, err)
	}
	events, err := st.Timeline(ctx, got.ID)
	if err != nil || int64(len(events)) != got.Version {
		t.Fatalf("%d events for version %d: %v", len(events), got.Version, err)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.Hash != domain.HashEvent(e) || (i > 0 && e.PrevHash != events[i-1].Hash) {
			t.Fatalf("event %d breaks the stream: %+v", i+1, e)
		}
	}
	if last := events[len(events)-1]; last.Action != "superseded" || last.Hash != got.AuditHead {
		t.Fatalf("last event %+v, audit head %s", last, got.AuditHead)
	}
}
