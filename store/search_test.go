package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// indexSearch runs the search indexer to the end of its queue, as a
// replica's loop does a moment after a write (migration 00028): the
// Operations page's search finds an operation by its content, key and
// error once it has run, and by its IDs and identifiers before.
func indexSearch(t *testing.T, s *store.Store) {
	t.Helper()
	for {
		n, err := s.IndexSearch(context.Background(), 100)
		if err != nil {
			t.Fatalf("indexing the search text: %v", err)
		}
		if n < 100 {
			return
		}
	}
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
		// The event ID is matched whole, in any case, and a part of it
		// finds nothing (each one's "vt-0" is in every other's).
		if got := found(t, s, domain.ListQuery{Text: strings.ToUpper(m.eventID), Deep: true, Limit: 50}); len(got) != 1 || got[0] != m.op.ID {
			t.Errorf("%s: search by its event ID %q found %v", st, m.eventID, got)
		}
		if got := found(t, s, domain.ListQuery{Text: m.eventID[1:], Deep: true, Limit: 50}); len(got) != 0 {
			t.Errorf("%s: a part of an event ID, %q, found %v", st, m.eventID[1:], got)
		}
		// The key is followed by the content in the side table's text; a
		// search must not match across the two.
		if got := found(t, s, domain.ListQuery{Text: m.key + "\n{", Deep: true, Limit: 50}); len(got) != 0 {
			t.Errorf("%s: a text across key and content found %v", st, got)
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
// 00012's side table for the text; the primary keys, migration 00025's hash
// indexes and the (namespace, key) index for what the text names exactly —
// so no table is read whole. The plans are asked for with sequential and
// plain index scans priced out: then only bitmap scans can avoid reading
// every row, and the planner takes them exactly when each arm of the OR has
// an index, whatever the tables' size.
func TestList_OperationsSearchPlan(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("the indexes are PostgreSQL's")
	}
	s := storetest.New(t)
	m := loadEveryState(t, s)[0]
	off := []string{"enable_seqscan = off", "enable_indexscan = off"}
	exactArms := []string{"Bitmap Index Scan on operations_pkey", "attempts_pkey",
		"Bitmap Index Scan on operations_exact_event_id", "Bitmap Index Scan on operations_exact_correlation_id",
		"Bitmap Index Scan on operations_exact_provider_key", "final_operations_result_ref",
		"Bitmap Index Scan on operations_namespace_key"}
	for _, c := range []struct {
		q          domain.ListQuery
		list       []string
		exactFirst bool
	}{
		{domain.ListQuery{Text: m.word, Deep: true}, []string{"Bitmap Index Scan on operation_search_body"}, true},
		// Found by its attempt's ID: the operation the first query named,
		// by its key, or the side table's matches.
		{domain.ListQuery{Text: m.attempt, Deep: true, States: []domain.State{domain.Completed}, Types: []string{"crm.task.create"}},
			[]string{"Bitmap Index Scan on operation_search_body", "Bitmap Index Scan on operations_pkey"}, true},
		{domain.ListQuery{Text: m.eventID, Deep: true}, []string{"Bitmap Index Scan on operation_search_body",
			"Bitmap Index Scan on operations_pkey"}, true},
		{domain.ListQuery{Text: m.key, Deep: true}, []string{"Bitmap Index Scan on operation_search_body"}, true},
		{domain.ListQuery{Text: m.errText, States: domain.DeskStates}, nil, false}, // the queue's: 00004's indexes
	} {
		plans := []string{}
		plan, err := store.ExplainList(s, c.q, off...)
		if err != nil {
			t.Fatal(err)
		}
		plans = append(plans, plan)
		for _, w := range c.list {
			if !strings.Contains(plan, w) {
				t.Errorf("%q: no %q in the plan:\n%s", c.q.Text, w, plan)
			}
		}
		if c.exactFirst {
			exact, err := store.ExplainExact(s, c.q.Text, off...)
			if err != nil {
				t.Fatal(err)
			}
			plans = append(plans, exact)
			for _, w := range exactArms {
				if !strings.Contains(exact, w) {
					t.Errorf("%q: no %q in the exact identifiers' plan:\n%s", c.q.Text, w, exact)
				}
			}
		}
		// A plan that cannot avoid what is priced out takes it anyway.
		for _, plan := range plans {
			for _, whole := range []string{"Seq Scan on operation", "Index Scan using operations_list", "Seq Scan on attempts"} {
				if strings.Contains(plan, whole) {
					t.Errorf("%q reads the whole table (%s):\n%s", c.q.Text, whole, plan)
				}
			}
		}
	}
}

// wantSide is the side table's rows for op (migrations 00012 and 00022):
// the key and content, and the error's message and code when it has one.
func wantSide(op domain.Operation) []store.SearchRow {
	rows := []store.SearchRow{{Part: 0, Body: strings.ToLower(op.Key + "\n" + string(op.Content))}}
	var msg, code string
	if op.LastError != nil {
		msg, code = op.LastError.Message, op.LastError.Code
	}
	if msg+code != "" {
		rows = append(rows, store.SearchRow{Part: 1, Body: strings.ToLower(msg + "\n" + code)})
	}
	return rows
}

// identifiers are op's identifiers the Operations page's search matches
// whole (migration 00022): those not empty.
func identifiers(op domain.Operation) []string {
	ids := []string{op.EventID, op.CorrelationID, op.ProviderKey}
	if op.Result != nil {
		ids = append(ids, op.Result.Ref)
	}
	return slices.DeleteFunc(ids, func(v string) bool { return v == "" })
}

// searchFollows checks, after step, that the Operations page's search finds
// the operation by its ID, every attempt's ID and, in upper case, each
// searched column that is not empty and word (a word of its content, if
// any); that it does not find it by gone (words no longer in it); and, on
// PostgreSQL, that the side table holds exactly the operation's text. It
// returns the side table's rows.
func searchFollows(t *testing.T, s *store.Store, step, id, word string, gone ...string) []store.SearchRow {
	t.Helper()
	ctx := context.Background()
	indexSearch(t, s)
	op, _, err := s.Load(ctx, "", id)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	atts, err := s.Attempts(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{op.ID}
	for _, a := range atts {
		texts = append(texts, a.ID)
	}
	upper := append([]string{op.Key, word}, identifiers(op)...)
	if op.LastError != nil {
		upper = append(upper, op.LastError.Message, op.LastError.Code)
	}
	for _, u := range upper {
		if u != "" {
			texts = append(texts, strings.ToUpper(u))
		}
	}
	for _, text := range texts {
		if got := found(t, s, domain.ListQuery{Text: text, Deep: true, Limit: 50}); !slices.Contains(got, id) {
			t.Errorf("%s: search %q found %v, not %s", step, text, got, id)
		}
	}
	for _, text := range gone {
		if got := found(t, s, domain.ListQuery{Text: text, Deep: true, Limit: 50}); slices.Contains(got, id) {
			t.Errorf("%s: search %q still finds %s", step, text, id)
		}
	}
	if !storetest.Postgres() {
		return nil
	}
	rows, err := store.SearchSide(ctx, s, id)
	if err != nil {
		t.Fatal(err)
	}
	want := wantSide(op)
	if len(rows) != len(want) {
		t.Fatalf("%s: side rows %+v, want %+v", step, rows, want)
	}
	for i := range want {
		if rows[i].Part != want[i].Part || rows[i].Body != want[i].Body {
			t.Fatalf("%s: side row %+v, want %+v", step, rows[i], want[i])
		}
	}
	return rows
}

// TestList_OperationsSearchFollows: the Operations page's search follows an
// operation through register, begin, a settle with an error, a settle with
// a result ref, a content revision, a content purge and a deletion; on
// PostgreSQL migration 00012's side table holds exactly its text at each
// step, and a begin, which changes none of it, does not write it.
func TestList_OperationsSearchFollows(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "Evt_Follow:Task", Type: "crm.task.create", EventID: "Evt_Follow",
		CorrelationID: "Run-Follow-7", ProviderKey: "Prov-Key-Follow", Content: json.RawMessage(`{"note":"Quill Zebra"}`),
		Claim: &domain.Claim{Worker: "w1"}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.Operation.ID
	registered := searchFollows(t, s, "register", id, "quill zebra")

	// The first attempt fails before it began: the operation may be retried.
	if _, err := l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeFailedRetryable,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Code: "GW-504", Message: "Upstream Sulked"}}); err != nil {
		t.Fatal(err)
	}
	failed := searchFollows(t, s, "settle with an error", id, "quill zebra")
	if storetest.Postgres() && failed[0] != registered[0] {
		t.Errorf("a settle rewrote the text fixed at register: %+v, then %+v", registered[0], failed[0])
	}

	// Its retry falls due.
	if err := store.Exec(ctx, s, "UPDATE operations SET next_retry_at = ? WHERE id = ?", time.Now().UTC().Add(-time.Minute), id); err != nil {
		t.Fatal(err)
	}
	claim, err := l.Workflow.Claim(ctx, wf, id, domain.Claim{Worker: "w2"})
	if err != nil {
		t.Fatal(err)
	}
	claimed := searchFollows(t, s, "claim", id, "quill zebra")
	tok := claim.Lease.Token
	if _, err := l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: tok}); err != nil {
		t.Fatal(err)
	}
	if begun := searchFollows(t, s, "begin", id, "quill zebra"); storetest.Postgres() && !slices.Equal(begun, claimed) {
		t.Errorf("a begin wrote the side table: %+v, then %+v", claimed, begun)
	}
	if _, err := l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeCompleted,
		Result: &domain.Result{Ref: "CRM-Ref-4242"}}); err != nil {
		t.Fatal(err)
	}
	searchFollows(t, s, "settle with a result ref", id, "quill zebra")

	if n, err := s.PurgeContent(ctx, time.Now().Add(time.Hour), 10); err != nil || n != 1 {
		t.Fatalf("purge: %d %v", n, err)
	}
	searchFollows(t, s, "content purge", id, "", "quill zebra")

	desk := intoDesk(t, l, "Evt_Follow:Revised", false)
	searchFollows(t, s, "into the desk", desk.ID, "")
	if _, err := l.Desk.Revise(ctx, person, desk.ID, domain.Revise{Content: json.RawMessage(`{"note":"Otter Marmalade"}`),
		Reason: "fix owner", ExpectedVersion: desk.Version}); err != nil {
		t.Fatal(err)
	}
	searchFollows(t, s, "content revision", desk.ID, "otter marmalade")

	// The handoff deletes no operation; one deleted by hand takes its text
	// with it.
	for _, table := range []string{"attempts", "content_versions", "notifications", "incident_items"} {
		if err := store.Exec(ctx, s, "DELETE FROM "+table+" WHERE operation_id = ?", desk.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.Exec(ctx, s, "DELETE FROM operations WHERE id = ?", desk.ID); err != nil {
		t.Fatal(err)
	}
	indexSearch(t, s)
	if got := found(t, s, domain.ListQuery{Text: "otter", Deep: true, Limit: 50}); len(got) != 0 {
		t.Errorf("a deleted operation is found: %v", got)
	}
	if storetest.Postgres() {
		if rows, err := store.SearchSide(ctx, s, desk.ID); err != nil || len(rows) != 0 {
			t.Errorf("a deleted operation's text stays: %+v %v", rows, err)
		}
	}
}

// TestList_OperationsSearchSideMultiRow: the side table follows operations
// written by the group commit's multi-row statements (store/multirow.go) as
// it follows those written one by one: registrations add their text, begins
// and settles with a result ref and no error write nothing (the result ref
// is found through migration 00025's index).
func TestList_OperationsSearchSideMultiRow(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	ids := &domain.IDSource{}
	var regs []domain.Change
	for i := range 6 {
		regs = append(regs, newRegistration(t, ids, fmt.Sprintf("evt_side%d:task", i)))
	}
	if plan := store.MultiRow(regs, true); !slices.Equal(plan, []int{6}) {
		t.Fatalf("six registrations are sent as %v, want one statement of 6", plan)
	}
	together := func(chs []domain.Change, create bool) {
		t.Helper()
		var written []bool
		var errs []error
		if create {
			written, errs = store.CreateTogether(s, chs)
		} else {
			written, errs = store.ApplyTogether(s, chs)
		}
		if slices.Contains(written, false) || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
			t.Fatalf("written %v, errs %v", written, errs)
		}
	}
	together(regs, true)
	registered := make([][]store.SearchRow, len(regs))
	for i, reg := range regs {
		registered[i] = searchFollows(t, s, "multi-row register", reg.Op.ID, "")
	}
	decide := func(id string, cmd domain.Command) domain.Change {
		t.Helper()
		op, _, err := s.Load(ctx, "", id)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := domain.Decide(op, cmd, domain.Env{Card: testCards()["crm.task.create"], Now: time.Now().UTC().Truncate(time.Microsecond),
			Actor: wf, NewID: ids.New, Jitter: func() float64 { return 0 }})
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	var begins, settles []domain.Change
	for _, reg := range regs {
		begins = append(begins, decide(reg.Op.ID, domain.Begin{LeaseToken: reg.Op.LeaseToken}))
	}
	if plan := store.MultiRow(begins, false); !slices.Equal(plan, []int{6}) {
		t.Fatalf("the begins are sent as %v, want one statement of 6", plan)
	}
	together(begins, false)
	for i, reg := range regs {
		if begun := searchFollows(t, s, "multi-row begin", reg.Op.ID, ""); !slices.Equal(begun, registered[i]) {
			t.Errorf("a begin wrote the side table: %+v, then %+v", registered[i], begun)
		}
		settles = append(settles, decide(reg.Op.ID, domain.Settle{LeaseToken: reg.Op.LeaseToken, Outcome: domain.OutcomeCompleted,
			Result: &domain.Result{Ref: fmt.Sprintf("CRM-Side-%d", i)}}))
	}
	if plan := store.MultiRow(settles, false); !slices.Equal(plan, []int{6}) {
		t.Fatalf("the settles are sent as %v, want one statement of 6", plan)
	}
	together(settles, false)
	for _, reg := range regs {
		if rows := searchFollows(t, s, "multi-row settle", reg.Op.ID, ""); len(rows) != 1 {
			t.Errorf("a settle with a result ref and no error wrote the side table: %+v", rows)
		}
	}
}

// TestMigration_searchSideBackfill: migrations 00012 and 00022 copy the
// searched text of the operations that exist before them into the side
// table, the error only of those that have one, and the search finds them
// by it and by their identifiers (00025's indexes).
func TestMigration_searchSideBackfill(t *testing.T) {
	ctx := context.Background()
	s, err := store.Connect(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := store.MigrateTo(ctx, s, 11); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i, outcome := range [][4]any{{nil, nil, nil, nil},
		{"CRM-Old-1", nil, nil, nil}, {nil, "Old Gateway Grumbled", "GW-500", domain.ClassTimeout.String()}} {
		if err := store.Exec(ctx, s, "INSERT INTO operations (id, namespace, key, type, state, version, event_id, correlation_id, "+
			"fingerprint, content_version, content_sha256, content, provider_key, result_ref, last_error_message, last_error_code, "+
			"last_error_class, created_at, updated_at) VALUES (?, 'campaigns', ?, 'crm.task.create', 'completed', 3, ?, ?, 'f', 1, 'x', ?, ?, ?, ?, ?, ?, ?, ?)",
			fmt.Sprintf("op_old%d", i), fmt.Sprintf("Evt_Old%d:Task", i), fmt.Sprintf("Evt_Old%d", i), fmt.Sprintf("Run-Old-%d", i),
			fmt.Sprintf(`{"note":"Older Note %d"}`, i), fmt.Sprintf("PK-Old-%d", i), outcome[0], outcome[1], outcome[2], outcome[3], now, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for i, parts := range []int{1, 1, 2} {
		id := fmt.Sprintf("op_old%d", i)
		if rows := searchFollows(t, s, "backfill", id, fmt.Sprintf("older note %d", i)); storetest.Postgres() && len(rows) != parts {
			t.Errorf("%s: %d rows in the side table, want %d", id, len(rows), parts)
		}
	}
}

// TestMigration_searchSideDown: migration 00012 undone puts back 00009's
// index and takes away the side table and its triggers, so that writes of
// operations work again without it; done again, it copies the operations
// written meanwhile.
func TestMigration_searchSideDown(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	if err := store.MigrateDownTo(ctx, s, 11); err != nil {
		t.Fatal(err)
	}
	// This code writes a column a later migration (00014) adds; put it back
	// so that only 00012 is missing.
	if err := store.Exec(ctx, s, `ALTER TABLE operations ADD COLUMN provider_key_content_version integer NOT NULL DEFAULT 0`); err != nil {
		t.Fatal(err)
	}
	withIdentityHash(t, s)
	if err := store.Exec(ctx, s, `DO $$ BEGIN
		IF to_regclass('operations_search') IS NULL THEN RAISE EXCEPTION 'no operations_search index'; END IF;
		IF to_regclass('operation_search') IS NOT NULL THEN RAISE EXCEPTION 'the side table stays'; END IF;
	END $$`); err != nil {
		t.Fatal(err)
	}
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "Evt_Down:Task", Type: "crm.task.create",
		Content: json.RawMessage(`{"note":"Written Between"}`)})
	if err != nil {
		t.Fatalf("a register with 00012 undone: %v", err)
	}
	if err := store.MigrateTo(ctx, s, 12); err != nil {
		t.Fatal(err)
	}
	if err := store.Exec(ctx, s, `DO $$ BEGIN
		IF to_regclass('operations_search') IS NOT NULL THEN RAISE EXCEPTION 'operations_search stays'; END IF;
	END $$`); err != nil {
		t.Fatal(err)
	}
	// 00012 done again copies it as 00012 writes it (00022, which
	// rewrites that text, is not done again here: the column put back
	// above is 00014's to add).
	op, _, err := s.Load(ctx, "", res.Operation.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rows, err := store.SearchSide(ctx, s, op.ID); err != nil || len(rows) != 1 || rows[0].Body != oldSide(op)[0].Body {
		t.Errorf("migrated again: side rows %+v (%v), want %+v", rows, err, oldSide(op))
	}
}

// oldSide is the side table's rows for op as migration 00012 wrote them,
// before 00022: every searched column, the identifiers too.
func oldSide(op domain.Operation) []store.SearchRow {
	rows := []store.SearchRow{{Part: 0, Body: strings.ToLower(strings.Join(
		[]string{op.Key, op.EventID, op.CorrelationID, op.ProviderKey, string(op.Content)}, "\n"))}}
	var ref, msg, code string
	if op.Result != nil {
		ref = op.Result.Ref
	}
	if op.LastError != nil {
		msg, code = op.LastError.Message, op.LastError.Code
	}
	if ref+msg+code != "" {
		rows = append(rows, store.SearchRow{Part: 1, Body: strings.ToLower(ref + "\n" + msg + "\n" + code)})
	}
	return rows
}

// registerSettled registers an operation with its identifiers and content,
// claims it and settles it with the result ref, or, with an error, as a
// terminal failure.
func registerSettled(t *testing.T, l *domain.Ledger, reg domain.Registration, ref string, fail *domain.ErrorInfo) domain.Operation {
	t.Helper()
	ctx := context.Background()
	reg.Type, reg.Claim = "crm.task.create", &domain.Claim{Worker: "w1", Begin: true}
	res, err := l.Workflow.Register(ctx, wf, reg)
	if err != nil {
		t.Fatal(err)
	}
	settle := domain.Settle{LeaseToken: res.Claim.Lease.Token, Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: ref}}
	if fail != nil {
		settle = domain.Settle{LeaseToken: res.Claim.Lease.Token, Outcome: domain.OutcomeFailedTerminal, Error: fail}
	}
	if _, err := l.Workflow.Settle(ctx, wf, res.Operation.ID, settle); err != nil {
		t.Fatal(err)
	}
	op, _, err := l.Store.Load(ctx, "", res.Operation.ID)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// TestList_OperationsSearchIdentifiers: the Operations page's search finds
// an operation by its event ID, correlation ID, provider key and result
// ref whole, in any case, and not by a part of one (migration 00022), while
// a part of its key, its content or its error's message or code still finds
// it; the same whether the content of other types is hidden from the
// searcher or of its own — and then its content is not found, while its
// identifiers are. The same value in two identifiers is kept once, and an
// identifier changed is found by its new value only.
func TestList_OperationsSearchIdentifiers(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	done := registerSettled(t, l, domain.Registration{Key: "Order-77:Ship", EventID: "Evt-Alpha-991", CorrelationID: "Run-Beta-552",
		ProviderKey: "Stripe-Idem-Gamma-313", Content: json.RawMessage(`{"note":"Quokka Parade"}`)}, "CRM-Delta-474", nil)
	failed := registerSettled(t, l, domain.Registration{Key: "Order-78:Ship", EventID: "Evt-Same-5", CorrelationID: "Evt-Same-5",
		Content: json.RawMessage(`{"note":"Wombat Fiesta"}`)}, "", &domain.ErrorInfo{Class: domain.ClassValidation, Code: "OWNER-GONE", Message: "Owner Vanished Quietly"})
	// A result ref that is also its event ID, but for the case.
	echoed := registerSettled(t, l, domain.Registration{Key: "Echo-1:Ship", EventID: "Same-Ref-9",
		Content: json.RawMessage(`{"note":"Heron"}`)}, "SAME-REF-9", nil)
	searchFollows(t, s, "settled", done.ID, "quokka parade")
	searchFollows(t, s, "failed", failed.ID, "wombat fiesta")
	searchFollows(t, s, "settled with its event ID", echoed.ID, "heron")

	for _, hidden := range [][]string{nil, {"other.type"}, {"crm.task.create"}} {
		finds := func(text string) []string {
			return found(t, s, domain.ListQuery{Text: text, Deep: true, ContentHiddenTypes: hidden, Limit: 50})
		}
		for _, c := range []struct {
			text string
			want []string
		}{
			{"evt-alpha-991", []string{done.ID}},
			{"RUN-BETA-552", []string{done.ID}},
			{"stripe-idem-gamma-313", []string{done.ID}},
			{"Crm-Delta-474", []string{done.ID}},
			{"evt-same-5", []string{failed.ID}},
			// A part of an identifier is not one.
			{"Alpha-991", nil}, {"Evt-Alpha-99", nil}, {"Beta", nil}, {"Idem-Gamma", nil}, {"Delta-474", nil}, {"Evt-Same", nil},
			// A part of the key or the error, in any case.
			{"der-77", []string{done.ID}}, {"ORDER-7", []string{done.ID, failed.ID}},
			{"vanished", []string{failed.ID}}, {"owner-g", []string{failed.ID}},
			// The content, unless it is hidden.
			{"quokka par", []string{done.ID}}, {"FIESTA", []string{failed.ID}},
		} {
			want := c.want
			if slices.Contains(hidden, "crm.task.create") && strings.Contains(strings.ToLower(c.text), "quokka") ||
				slices.Contains(hidden, "crm.task.create") && strings.Contains(strings.ToLower(c.text), "fiesta") {
				want = nil
			}
			got := finds(c.text)
			slices.Sort(got)
			want = slices.Sorted(slices.Values(want))
			if !slices.Equal(got, want) {
				t.Errorf("hidden %v: search %q found %v, want %v", hidden, c.text, got, want)
			}
		}
	}

	// An identifier changed (as a revision renews a provider key) is found
	// by its new value, not its old one.
	if err := store.Exec(ctx, s, "UPDATE operations SET correlation_id = ?, provider_key = ? WHERE id = ?",
		"Evt-Same-5-Renewed", "Stripe-Idem-Renewed", failed.ID); err != nil {
		t.Fatal(err)
	}
	searchFollows(t, s, "identifiers changed", failed.ID, "wombat fiesta", "stripe-idem-gamma-313", "evt-same-5-x")
	for text, want := range map[string]bool{"evt-same-5": true, "evt-same-5-renewed": true, "stripe-idem-renewed": true} {
		if got := slices.Contains(found(t, s, domain.ListQuery{Text: text, Deep: true, Limit: 50}), failed.ID); got != want {
			t.Errorf("after the change, search %q finds it: %v, want %v", text, got, want)
		}
	}
}

// TestMigration_searchExactDown: migration 00022 undone puts back 00012's
// text (every identifier in the side table's text, the result ref in the
// outcome's) and its triggers and takes away the exact table, so that
// writes of operations keep the text as before; done again, it copies the
// operations written meanwhile.
func TestMigration_searchExactDown(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	before := registerSettled(t, l, domain.Registration{Key: "Evt_Before:Task", EventID: "Evt_Before", CorrelationID: "Run-Before",
		Content: json.RawMessage(`{"note":"Written Before"}`)}, "CRM-Before-1", nil)
	if err := store.MigrateDownTo(ctx, s, 21); err != nil {
		t.Fatal(err)
	}
	laterColumns(t, s, 21, true)
	withIdentityHash(t, s)
	between := registerSettled(t, l, domain.Registration{Key: "Evt_Between:Task", EventID: "Evt_Between",
		Content: json.RawMessage(`{"note":"Written Between"}`)}, "", &domain.ErrorInfo{Class: domain.ClassValidation, Code: "GW-1", Message: "Nope"})
	if storetest.Postgres() {
		if err := store.Exec(ctx, s, `DO $$ BEGIN
			IF to_regclass('operation_search_exact') IS NOT NULL THEN RAISE EXCEPTION 'the exact table stays'; END IF;
		END $$`); err != nil {
			t.Fatal(err)
		}
		for _, op := range []domain.Operation{before, between} {
			rows, err := store.SearchSide(ctx, s, op.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := oldSide(op)
			if len(rows) != len(want) {
				t.Fatalf("%s with 00022 undone: side rows %+v, want %+v", op.Key, rows, want)
			}
			for i := range want {
				if rows[i].Part != want[i].Part || rows[i].Body != want[i].Body {
					t.Errorf("%s with 00022 undone: side row %+v, want %+v", op.Key, rows[i], want[i])
				}
			}
		}
	}
	laterColumns(t, s, 21, false)
	withoutIdentityHash(t, s)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	searchFollows(t, s, "migrated again", before.ID, "written before")
	searchFollows(t, s, "written between, migrated again", between.ID, "written between")
}

// TestMigration_searchIdentifiersDown: migration 00025 undone puts back
// 00022's table of identifiers, filled with every operation's, and its
// trigger, which keeps it for the operations written meanwhile; done again,
// it drops the table and the search finds them all by their identifiers
// through its indexes.
func TestMigration_searchIdentifiersDown(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	before := registerSettled(t, l, domain.Registration{Key: "Idx_Before:Task", EventID: "Evt-Idx-Before", CorrelationID: "Run-Idx-Before",
		ProviderKey: "PK-Idx-Before", Content: json.RawMessage(`{"note":"Indexed Before"}`)}, "CRM-Idx-Before", nil)
	if err := store.MigrateDownTo(ctx, s, 24); err != nil {
		t.Fatal(err)
	}
	laterColumns(t, s, 24, true)
	withIdentityHash(t, s)
	between := registerSettled(t, l, domain.Registration{Key: "Idx_Between:Task", EventID: "Evt-Idx-Between",
		Content: json.RawMessage(`{"note":"Indexed Between"}`)}, "CRM-Idx-Between", nil)
	if storetest.Postgres() {
		for _, op := range []domain.Operation{before, between} {
			op, _, err := s.Load(ctx, "", op.ID)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, v := range identifiers(op) {
				want = append(want, strings.ToLower(v))
			}
			slices.Sort(want)
			got, err := store.SearchExact(ctx, s, op.ID)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, slices.Compact(want)) {
				t.Errorf("%s with 00025 undone: exact values %q, want %q", op.Key, got, want)
			}
		}
	}
	laterColumns(t, s, 24, false)
	withoutIdentityHash(t, s)
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if storetest.Postgres() {
		if err := store.Exec(ctx, s, `DO $$ BEGIN
			IF to_regclass('operation_search_exact') IS NOT NULL THEN RAISE EXCEPTION 'the exact table stays'; END IF;
		END $$`); err != nil {
			t.Fatal(err)
		}
	}
	searchFollows(t, s, "migrated again", before.ID, "indexed before")
	searchFollows(t, s, "written between, migrated again", between.ID, "indexed between")
	for text, id := range map[string]string{"evt-idx-before": before.ID, "RUN-IDX-BEFORE": before.ID, "pk-idx-before": before.ID,
		"crm-idx-before": before.ID, "Evt-Idx-Between": between.ID, "crm-idx-between": between.ID} {
		if got := found(t, s, domain.ListQuery{Text: text, Deep: true, Limit: 50}); !slices.Equal(got, []string{id}) {
			t.Errorf("search %q found %v, want %s", text, got, id)
		}
	}
}

// laterColumns puts back (or, before the migrations run up again, takes
// away) the columns that migrations after version, the one under test, add
// and that this code writes with every settle (00026:
// attempts.settle_sha256) or desk entry (00033: the incident's open
// counts), so that only the migration under test is missing.
func laterColumns(t *testing.T, s *store.Store, version int, add bool) {
	t.Helper()
	later := []struct {
		version       int
		table, column string
		def           string
	}{
		{26, "attempts", "settle_sha256", "text"},
		{33, "incidents", "open_unknown_outcome", "integer NOT NULL DEFAULT 0"},
		{33, "incidents", "open_failed_terminal", "integer NOT NULL DEFAULT 0"},
	}
	for _, c := range later {
		if c.version <= version {
			continue
		}
		sql := "ALTER TABLE " + c.table + " ADD COLUMN " + c.column + " " + c.def
		if !add {
			sql = "ALTER TABLE " + c.table + " DROP COLUMN " + c.column
		}
		if err := store.Exec(context.Background(), s, sql); err != nil {
			t.Fatal(err)
		}
	}
}
