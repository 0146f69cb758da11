package store_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestStore_LoadMany: many IDs read at once — more than one query's worth,
// with IDs that name nothing among them — give exactly the operations Load
// gives one by one, and the database's clock.
func TestStore_LoadMany(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	made := loadEveryState(t, s)
	var ids []string
	for i := range 700 {
		ids = append(ids, fmt.Sprintf("op_missing%03d", i))
	}
	want := map[string]domain.Operation{}
	for i, m := range made {
		ids[i*70+5] = m.op.ID // spread over the queries
		op, _, err := s.Load(ctx, "", m.op.ID)
		if err != nil {
			t.Fatal(err)
		}
		want[op.ID] = op
	}
	ops, now, err := s.LoadMany(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	if now.IsZero() {
		t.Error("no clock")
	}
	got := map[string]domain.Operation{}
	for _, op := range ops {
		got[op.ID] = op
	}
	if len(ops) != len(made) || !reflect.DeepEqual(got, want) {
		t.Fatalf("LoadMany read %d operations, want the %d Load reads:\n%+v\n%+v", len(ops), len(made), got, want)
	}
	if ops, _, err := s.LoadMany(ctx, nil); err != nil || len(ops) != 0 {
		t.Fatalf("no IDs: %v, %v", ops, err)
	}
}
