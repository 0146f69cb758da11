package store_test

import (
	"context"
	"maps"
	"sync"
	"testing"

	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestSyncCards_ReplicasStartTogether: four replicas syncing the same cards
// into a fresh database at the same moment all succeed and agree on every
// card's version — none fails on the primary key of operation_types.
func TestSyncCards_ReplicasStartTogether(t *testing.T) {
	ctx := context.Background()
	for trial := 0; trial < 8; trial++ {
		url := storetest.URL(t)
		first, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		first.Close()
		const replicas = 4
		stores := make([]*store.Store, replicas)
		for i := range stores {
			if stores[i], err = store.Connect(url); err != nil {
				t.Fatal(err)
			}
		}
		got := make([]map[string]int, replicas)
		errs := make([]error, replicas)
		var start, done sync.WaitGroup
		start.Add(1)
		for i := range stores {
			done.Add(1)
			go func() {
				defer done.Done()
				start.Wait()
				got[i], errs[i] = stores[i].SyncCards(ctx, testCards())
			}()
		}
		start.Done()
		done.Wait()
		for i, s := range stores {
			s.Close()
			if errs[i] != nil {
				t.Fatalf("trial %d: replica %d: %v", trial, i, errs[i])
			}
			if !maps.Equal(got[i], got[0]) {
				t.Fatalf("trial %d: replicas disagree on versions: %v vs %v", trial, got[i], got[0])
			}
		}
		if got[0]["crm.task.create"] != 1 || got[0]["coupon.issue"] != 1 {
			t.Fatalf("trial %d: a fresh database should hold version 1 of each card: %v", trial, got[0])
		}
	}
}
