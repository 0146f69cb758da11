package domain_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestLedger_Batch: a preview says which items a retry applies to and why
// the others are skipped, writing nothing; applying it retries each item
// with its own version, skips and names the one someone changed since the
// preview, and every event it wrote carries the one batch_id.
func TestLedger_Batch(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	var items []domain.BatchItem
	for i := range 4 {
		op := intoDesk(t, l, fmt.Sprintf("evt_batch:%d", i), i == 3) // the last one's outcome is unknown
		items = append(items, domain.BatchItem{ID: op.ID, ExpectedVersion: op.Version})
	}
	retry := domain.Batch{Items: items, Kind: domain.BatchResolve, Action: domain.ResolveRetry, Reason: "mailer back up", Preview: true}
	pre, err := l.Bulk.Batch(ctx, operator, retry)
	if err != nil {
		t.Fatal(err)
	}
	if pre.Applied != 3 || pre.Skipped != 1 || pre.Items[3].Outcome != domain.BatchSkipped ||
		!strings.Contains(pre.Items[3].Why, "not allowed from unknown_outcome") || pre.Items[0].To != domain.Received {
		t.Fatalf("preview: %+v", pre)
	}
	for _, it := range items {
		if op, _, _ := st.Load(ctx, "", it.ID); op.Version != it.ExpectedVersion {
			t.Fatalf("the preview changed %s", it.ID)
		}
	}
	// Someone cancels item 1 between the preview and the apply.
	if _, err := l.Desk.Resolve(ctx, ada, items[1].ID, domain.Resolve{Action: domain.ResolveCancel, Reason: "withdrawn",
		ExpectedVersion: items[1].ExpectedVersion}); err != nil {
		t.Fatal(err)
	}
	retry.Preview = false
	res, err := l.Bulk.Batch(ctx, operator, retry)
	if err != nil {
		t.Fatal(err)
	}
	if res.Applied != 2 || res.Skipped != 2 || res.Items[1].Code != domain.EVersionConflict ||
		!strings.Contains(res.Items[1].Why, "resolved by ada@example.com") {
		t.Fatalf("apply: %+v", res)
	}
	for i, want := range []domain.State{domain.Received, domain.Cancelled, domain.Received, domain.UnknownOutcome} {
		op, _, _ := st.Load(ctx, "", items[i].ID)
		if op.State != want {
			t.Fatalf("item %d is %s, want %s", i, op.State, want)
		}
		tl, _ := st.Timeline(ctx, items[i].ID)
		var d struct {
			BatchID string `json:"batch_id"`
		}
		_ = json.Unmarshal(tl[len(tl)-1].Detail, &d)
		if applied := i == 0 || i == 2; applied != (d.BatchID == res.ID) {
			t.Fatalf("item %d's last event has batch_id %q (batch %s)", i, d.BatchID, res.ID)
		}
	}

	// Refused whole: too many items, a decision that needs each item's own
	// reference, no reason. Nothing is written.
	many := make([]domain.BatchItem, domain.MaxBatch+1)
	for i := range many {
		many[i] = domain.BatchItem{ID: fmt.Sprintf("op_%d", i), ExpectedVersion: 1}
	}
	for _, b := range []domain.Batch{
		{Items: many, Kind: domain.BatchNote, Reason: "x"},
		{Items: items[:1], Kind: domain.BatchResolve, Action: domain.ResolveConfirmExecuted, Reason: "x"},
		{Items: items[:1], Kind: domain.BatchAssign},
		{Items: []domain.BatchItem{items[0], items[0]}, Kind: domain.BatchNote, Reason: "x"},
	} {
		if _, err := l.Bulk.Batch(ctx, operator, b); domain.ErrorCode(err) != domain.EInvalid {
			t.Fatalf("%d items, %s: %v", len(b.Items), b.Kind, err)
		}
	}
	if _, err := l.Bulk.Batch(ctx, wf, retry); domain.ErrorCode(err) != domain.EForbidden {
		t.Fatalf("a workflow's batch: %v", err)
	}
}

// TestLedger_BatchPreview_readOnce: a preview reads its items at once and
// still decides each on its own, in the order given: an ID that names no
// operation is skipped as not found, an item changed since the version the
// person saw is skipped with the change named, the others would apply.
func TestLedger_BatchPreview_readOnce(t *testing.T) {
	ctx := context.Background()
	l := domain.NewLedger(storetest.New(t), testCards())
	a := intoDesk(t, l, "evt_pre:a", false)
	b := intoDesk(t, l, "evt_pre:b", false)
	if _, err := l.Desk.Resolve(ctx, ada, b.ID, domain.Resolve{Action: domain.ResolveCancel, Reason: "withdrawn",
		ExpectedVersion: b.Version}); err != nil {
		t.Fatal(err)
	}
	pre, err := l.Bulk.Batch(ctx, operator, domain.Batch{Kind: domain.BatchResolve, Action: domain.ResolveCancel, Reason: "called off",
		Preview: true, Items: []domain.BatchItem{{ID: "op_nothing", ExpectedVersion: 1}, {ID: b.ID, ExpectedVersion: b.Version},
			{ID: a.ID, ExpectedVersion: a.Version}}})
	if err != nil {
		t.Fatal(err)
	}
	got := pre.Items
	if len(got) != 3 || got[0].ID != "op_nothing" || got[0].Code != domain.ENotFound || got[0].Outcome != domain.BatchSkipped ||
		got[1].ID != b.ID || got[1].Code != domain.EVersionConflict || !strings.Contains(got[1].Why, "resolved by ada@example.com") ||
		got[2].ID != a.ID || got[2].Outcome != domain.BatchWouldApply || got[2].To != domain.Cancelled ||
		pre.Applied != 1 || pre.Skipped != 2 {
		t.Fatalf("preview: %+v", pre)
	}
}
