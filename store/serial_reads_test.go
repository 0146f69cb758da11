package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestSerialReads: on PostgreSQL the desk's reads of operations — the
// Operations page's search and its count, the queue's count — are planned
// without parallel workers (migration 00034), even where the costs make
// workers free: each is a bounded read, and waiting for workers to start
// cost more than the read.
func TestSerialReads(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("parallel plans are PostgreSQL's")
	}
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	for i := range 300 {
		registerSettled(t, l, domain.Registration{Key: fmt.Sprintf("Serial_%03d:Task", i),
			Content: json.RawMessage(fmt.Sprintf(`{"note":"call back later, order %d"}`, i))}, "", &domain.ErrorInfo{Class: domain.ClassValidation, Message: "read timeout"})
	}
	indexSearch(t, s)
	if err := store.Exec(ctx, s, "ANALYZE operations, operation_search"); err != nil {
		t.Fatal(err)
	}
	free := []string{"parallel_setup_cost = 0", "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
		"min_parallel_index_scan_size = 0", "max_parallel_workers_per_gather = 2"}
	for name, explain := range map[string]func() (string, error){
		"the Operations page's search": func() (string, error) {
			return store.ExplainList(s, domain.ListQuery{Text: "call back", Deep: true, Limit: 50}, free...)
		},
		"its count": func() (string, error) {
			return store.ExplainTotal(s, domain.ListQuery{Text: "call back", Deep: true}, 200, free...)
		},
		"the queue's count": func() (string, error) {
			return store.ExplainDeskCount(s, domain.ListQuery{States: domain.DeskStates, Text: "read timeout"}, 5000, free...)
		},
	} {
		plan, err := explain()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(plan, "Parallel") || strings.Contains(plan, "Gather") {
			t.Errorf("%s is planned with parallel workers:\n%s", name, plan)
		}
	}
}
