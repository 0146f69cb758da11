package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// searchFinds reports whether the Operations page's search for text finds
// the operation id.
func searchFinds(t *testing.T, s *store.Store, text, id string) bool {
	t.Helper()
	ops, _, err := s.DeskList(context.Background(), domain.ListQuery{Text: text, Deep: true, Limit: 50})
	if err != nil {
		t.Fatalf("search %q: %v", text, err)
	}
	return slices.ContainsFunc(ops, func(op domain.Operation) bool { return op.ID == id })
}

// withinTwoSeconds polls the search for text until it finds id, and fails
// the test if it has not two seconds after since.
func withinTwoSeconds(t *testing.T, s *store.Store, since time.Time, text, id string) {
	t.Helper()
	for !searchFinds(t, s, text, id) {
		if time.Since(since) > 2*time.Second {
			t.Errorf("search %q did not find %s within 2 s of the write", text, id)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// runIndexer runs a search indexer loop on s until the test ends.
func runIndexer(t *testing.T, s *store.Store) {
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { (&reconcile.SearchIndexer{Index: s, Log: slog.New(slog.DiscardHandler)}).Run(ctx) })
	t.Cleanup(func() { stop(); wg.Wait() })
}

// TestSearchIndexer_exactAtOnceTextWithinTwoSeconds: a registration is
// found by its key, its identifiers, its ID and its attempt's ID as soon as
// it is written, before any indexer ran; with an indexer loop running, as
// every replica runs one, by a word of its content within two seconds of
// the write. An operation that fails is found by its new error's text
// within two seconds of the settle, and one that completes by its result
// ref as soon as it settles.
func TestSearchIndexer_exactAtOnceTextWithinTwoSeconds(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, card())
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}

	wrote := time.Now()
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "Order-4711:Ship", Type: "crm.task.create", EventID: "Evt-4711",
		CorrelationID: "Run-4711", ProviderKey: "Idem-4711", Content: json.RawMessage(`{"note":"Capybara Lantern"}`),
		Claim: &domain.Claim{Worker: "w", Begin: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Operation.ID
	atts, err := s.Attempts(ctx, id)
	if err != nil || len(atts) != 1 {
		t.Fatalf("attempts %v %v", atts, err)
	}
	for _, text := range []string{"Order-4711:Ship", "EVT-4711", "run-4711", "IDEM-4711", id, atts[0].ID} {
		if !searchFinds(t, s, text, id) {
			t.Errorf("search %q does not find the registration at once", text)
		}
	}
	// On PostgreSQL the write path leaves the text to the indexer, which
	// has not run yet (SQLite's search reads the content itself).
	if storetest.Postgres() && searchFinds(t, s, "capybara lant", id) {
		t.Error("the content was found before any indexer ran: the write path wrote the search text")
	}
	runIndexer(t, s)
	withinTwoSeconds(t, s, wrote, "capybara lant", id)

	settled := time.Now()
	if _, err := l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: res.Claim.Lease.Token, Outcome: domain.OutcomeFailedTerminal,
		Error: &domain.ErrorInfo{Class: domain.ClassValidation, Code: "OWNER-GONE", Message: "Owner Wandered Off"}}); err != nil {
		t.Fatal(err)
	}
	withinTwoSeconds(t, s, settled, "wandered off", id)
	withinTwoSeconds(t, s, settled, "owner-gone", id)

	other, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "Order-4712:Ship", Type: "crm.task.create",
		Content: json.RawMessage(`{"note":"Heron"}`), Claim: &domain.Claim{Worker: "w", Begin: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Workflow.Settle(ctx, wf, other.Operation.ID, domain.Settle{LeaseToken: other.Claim.Lease.Token,
		Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "CRM-Ref-4712"}}); err != nil {
		t.Fatal(err)
	}
	if !searchFinds(t, s, "crm-ref-4712", other.Operation.ID) {
		t.Error("search by the result ref does not find the operation as soon as it settles")
	}
}

// TestSearchIndexer_catchesUpAfterRestart: operations written while no
// indexer runs — as when a replica crashes between a write and its
// indexing — are found by their content once a new store's indexer runs:
// what is left to index is in the database, not in the memory of the
// process that wrote it.
func TestSearchIndexer_catchesUpAfterRestart(t *testing.T) {
	ctx := context.Background()
	url := storetest.MigratedURL(t)
	before, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	l := domain.NewLedger(before, card())
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	var ids []string
	for i := range 30 {
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("restart-%d", i), Type: "crm.task.create",
			Content: json.RawMessage(fmt.Sprintf(`{"note":"Walrus%03dTango"}`, i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.Operation.ID)
	}
	if err := before.Close(); err != nil {
		t.Fatal(err)
	}

	after, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { after.Close() })
	if storetest.Postgres() && searchFinds(t, after, "walrus000tango", ids[0]) {
		t.Fatal("the content was found before any indexer ran: the test shows nothing")
	}
	n := (&reconcile.SearchIndexer{Index: after, Batch: 7}).Tick(ctx)
	if want := 30; storetest.Postgres() && n != want {
		t.Errorf("the restarted indexer took %d changes, want %d", n, want)
	}
	for i, id := range ids {
		if text := fmt.Sprintf("walrus%03dtango", i); !searchFinds(t, after, text, id) {
			t.Errorf("after the restart, search %q does not find %s", text, id)
		}
	}
}

// TestSearchIndexer_twoReplicasIndexEachChangeOnce: two replicas' indexers
// work one queue at once, in small batches: together they take each queued
// change exactly once, and every operation is found by its own content and
// error, and by no other's.
func TestSearchIndexer_twoReplicasIndexEachChangeOnce(t *testing.T) {
	ctx := context.Background()
	rs := replicas(t, 2)
	l := domain.NewLedger(rs[0], card())
	wf := domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
	const n = 120
	ids := make([]string, n)
	for i := range n {
		reg := domain.Registration{Key: fmt.Sprintf("two-%d", i), Type: "crm.task.create",
			Content: json.RawMessage(fmt.Sprintf(`{"note":"Lynx%03dMango"}`, i))}
		if i%3 == 0 {
			reg.Claim = &domain.Claim{Worker: "w", Begin: true}
		}
		res, err := l.Workflow.Register(ctx, wf, reg)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = res.Operation.ID
		if i%3 == 0 { // a second change of the same operation, queued again
			if _, err := l.Workflow.Settle(ctx, wf, ids[i], domain.Settle{LeaseToken: res.Claim.Lease.Token, Outcome: domain.OutcomeFailedTerminal,
				Error: &domain.ErrorInfo{Class: domain.ClassValidation, Message: fmt.Sprintf("Gate%03dShut", i)}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var taken [2]int
	var wg sync.WaitGroup
	for r := range rs {
		wg.Go(func() { taken[r] = (&reconcile.SearchIndexer{Index: rs[r], Batch: 5}).Tick(ctx) })
	}
	wg.Wait()
	if storetest.Postgres() {
		if got, want := taken[0]+taken[1], n+n/3; got != want {
			t.Errorf("the two indexers took %d and %d changes, %d in all; want %d, each once", taken[0], taken[1], got, want)
		}
		if more := (&reconcile.SearchIndexer{Index: rs[1]}).Tick(ctx); more != 0 {
			t.Errorf("%d changes left after both indexers worked the queue off", more)
		}
	}
	for i, id := range ids {
		texts := []string{fmt.Sprintf("lynx%03dmango", i)}
		if i%3 == 0 {
			texts = append(texts, fmt.Sprintf("gate%03dshut", i))
		}
		for _, text := range texts {
			ops, _, err := rs[1].DeskList(ctx, domain.ListQuery{Text: text, Deep: true, Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			if len(ops) != 1 || ops[0].ID != id {
				t.Errorf("search %q found %d operations, want only %s", text, len(ops), id)
			}
		}
	}
}
