package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

func TestAppendSystem_ConcurrentAppendsChain(t *testing.T) {
	s := storetest.New(t)
	ids := &domain.IDSource{}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := domain.SystemEvent(context.Background(), ids, time.Now(), domain.System, "token_created", "", map[string]any{"n": i})
			if _, err := s.AppendSystem(context.Background(), e); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	events, err := s.Timeline(context.Background(), domain.SystemStream)
	if err != nil || len(events) != 20 {
		t.Fatalf("%d system events (%v), want 20", len(events), err)
	}
	prev := ""
	for i, e := range events {
		if e.Seq != int64(i+1) || e.PrevHash != prev || e.Hash != domain.HashEvent(e) {
			t.Fatal(fmt.Sprintf("system event %d breaks the chain: %+v", i+1, e))
		}
		prev = e.Hash
	}
}
