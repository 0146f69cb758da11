package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// searchable is an operation made for the search tests with what should
// find it.
type searchable struct {
	op            domain.Operation
	attempt       string // an attempt's ID
	word, errText string // a word of its content, its error's text
	key, eventID  string
}

// loadEveryState loads one operation in each state, each with an attempt,
// a word in its content and an error text that no other one has.
func loadEveryState(t *testing.T, s *store.Store) []searchable {
	t.Helper()
	l := domain.NewLedger(s, testCards())
	card, err := l.Cards.Get("crm.task.create")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	var made []searchable
	var changes []domain.Change
	for i, st := range domain.States {
		m := searchable{word: fmt.Sprintf("Quill%02dZebra", i), errText: fmt.Sprintf("gateway said no %02d", i),
			key: fmt.Sprintf("k-%02d", i), eventID: fmt.Sprintf("evt-%02d", i)}
		env := domain.Env{Card: card, Now: now.Add(time.Duration(i) * time.Second), Actor: wf, NewID: l.IDs.New}
		ch, err := domain.NewOperation(domain.Registration{Namespace: "campaigns", Key: m.key, Type: card.Name, EventID: m.eventID},
			[]byte(`{"note":"`+m.word+`"}`), false, env)
		if err != nil {
			t.Fatal(err)
		}
		ch.Op.State, ch.Op.Attempts = st, 1
		ch.Op.LastError = &domain.ErrorInfo{Class: domain.ClassValidation, Message: m.errText}
		m.attempt = l.IDs.New("att")
		ch.Attempt = &domain.AttemptChange{New: true, Attempt: domain.Attempt{ID: m.attempt, OperationID: ch.Op.ID,
			Number: 1, Worker: "w1", LeaseToken: 1, ClaimedAt: env.Now}}
		m.op = ch.Op
		made, changes = append(made, m), append(changes, ch)
	}
	if err := s.CreateBatch(context.Background(), changes); err != nil {
		t.Fatal(err)
	}
	return made
}

// found lists the IDs the desk's list finds for q.
func found(t *testing.T, s *store.Store, q domain.ListQuery) []string {
	t.Helper()
	ops, _, err := s.DeskList(context.Background(), q)
	if err != nil {
		t.Fatalf("%+v: %v", q, err)
	}
	ids := make([]string, len(ops))
	for i, op := range ops {
		ids[i] = op.ID
	}
	return ids
}

// TestList_OperationsSearch: the Operations page's search finds an
// operation in every state by its ID, an attempt's ID, a word of its
// content in any case and its error's text — alone or with its state as a
// filter — and a text that spans two columns finds nothing.
func TestList_OperationsSearch(t *testing.T) {
	s := storetest.New(t)
	made := loadEveryState(t, s)
	for _, m := range made {
		st := m.op.State
		for _, text := range []string{m.op.ID, m.attempt, strings.ToUpper(m.word), m.errText} {
			for _, states := range [][]domain.State{nil, {st}} {
				got := found(t, s, domain.ListQuery{Text: text, Deep: true, States: states, Limit: 50})
				if len(got) != 1 || got[0] != m.op.ID {
					t.Errorf("%s: search %q (states %v) found %v, want %s", st, text, states, got, m.op.ID)
				}
			}
		}
		// The key is followed by the event ID in the index's text; a search
		// must not match across the two.
		if got := found(t, s, domain.ListQuery{Text: m.key + "\n" + m.eventID, Deep: true, Limit: 50}); len(got) != 0 {
			t.Errorf("%s: a text across key and event ID found %v", st, got)
		}
	}
	// The queue's search matches neither IDs nor content.
	for _, text := range []string{made[0].op.ID, made[0].attempt, made[0].word} {
		if got := found(t, s, domain.ListQuery{Text: text, Limit: 50}); len(got) != 0 {
			t.Errorf("the queue's search %q found %v", text, got)
		}
	}
}

// TestList_OperationsSearchPlan: on PostgreSQL every arm of the Operations
// page's search can be read from an index — the trigram index of migration
// 00012's side table and the primary keys — so neither table is read whole.
// The plan is asked for with sequential and plain index scans priced out:
// then only bitmap scans can avoid reading every row, and the planner takes
// them exactly when each arm of the OR has an index, whatever the tables'
// size.
func TestList_OperationsSearchPlan(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("the indexes are PostgreSQL's")
	}
	s := storetest.New(t)
	m := loadEveryState(t, s)[0]
	off := []string{"enable_seqscan = off", "enable_indexscan = off"}
	for _, c := range []struct {
		q    domain.ListQuery
		want []string
	}{
		{domain.ListQuery{Text: m.word, Deep: true}, []string{"Bitmap Index Scan on operation_search_body", "Bitmap Index Scan on operation_search_pkey"}},
		{domain.ListQuery{Text: m.attempt, Deep: true, States: []domain.State{domain.Completed}, Types: []string{"crm.task.create"}},
			[]string{"Bitmap Index Scan on operation_search_body", "attempts_pkey"}},
		{domain.ListQuery{Text: m.errText, States: domain.DeskStates}, nil}, // the queue's: 00004's indexes
	} {
		plan, err := store.ExplainList(s, c.q, off...)
		if err != nil {
			t.Fatal(err)
		}
		// A plan that cannot avoid what is priced out takes it anyway.
		for _, whole := range []string{"Seq Scan on operation", "Index Scan using operations_list"} {
			if strings.Contains(plan, whole) {
				t.Errorf("%q reads the whole table (%s):\n%s", c.q.Text, whole, plan)
			}
		}
		for _, w := range c.want {
			if !strings.Contains(plan, w) {
				t.Errorf("%q: no %q in the plan:\n%s", c.q.Text, w, plan)
			}
		}
	}
}
