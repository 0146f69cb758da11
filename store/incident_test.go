package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestLedger_DeskIncidents: the desk's items grouped by provider, type and
// error, the largest first; an incident's filter lists exactly its items.
func TestLedger_DeskIncidents(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	for i := range 5 {
		intoDesk(t, l, fmt.Sprintf("evt_inc:%d", i), i < 3) // 3 timeouts, 2 validation errors
	}
	got, err := l.DeskIncidents(ctx, person)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Count != 3 || got[0].Error.Class != "timeout" || got[1].Count != 2 ||
		got[1].Error.Class != "validation" || got[0].Provider == "" || len(got[0].Namespaces) != 1 || got[0].FirstSeen.IsZero() {
		t.Fatalf("incidents: %+v", got)
	}
	ops, _, err := st.List(ctx, domain.ListQuery{States: domain.DeskStates, Error: &got[1].Error, Limit: 50})
	if err != nil || len(ops) != 2 || ops[0].LastError.Class.String() != "validation" {
		t.Fatalf("the incident's items: %d %v", len(ops), err)
	}
}
