package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// renderers are the three ways a write plan is written, one store each.
var renderers = []string{"tx", "single", "multi"}

// teeStore decides on the first store and writes every change through all
// three renderers, one database each; every renderer must give the same
// answer.
type teeStore struct {
	*store.Store // the "tx" renderer's: what the Ledger reads
	all          []*store.Store
	t            *testing.T
}

func (s teeStore) write(chs []domain.Change, create bool) []bool {
	s.t.Helper()
	var first []bool
	var firstCodes []string
	for i, via := range renderers {
		written, errs := store.WriteVia(s.all[i], via, chs, create)
		codes := make([]string, len(errs))
		for j, err := range errs {
			switch {
			case err != nil:
				codes[j] = string(domain.ErrorCode(err))
			case !create && !written[j]:
				codes[j] = string(domain.EConflict)
			}
		}
		if i == 0 {
			first, firstCodes = written, codes
			continue
		}
		if !slices.Equal(written, first) || !slices.Equal(codes, firstCodes) {
			s.t.Errorf("%s wrote %v %v, tx %v %v (%s)", via, written, codes, first, firstCodes, errs)
		}
	}
	return first
}

func (s teeStore) Create(ctx context.Context, ch domain.Change) (domain.Operation, bool, error) {
	if s.write([]domain.Change{ch}, true)[0] {
		return ch.Op, true, nil
	}
	op, _, err := s.LoadByKey(ctx, ch.Op.Namespace, ch.Op.Key)
	if ch.NoOpenTwin && domain.ErrorCode(err) == domain.ENotFound {
		return domain.Operation{}, false, domain.Errorf(domain.EConflict, "a twin is open") // as the store answers
	}
	return op, false, err
}

func (s teeStore) Apply(ctx context.Context, ch domain.Change) error {
	if !s.write([]domain.Change{ch}, false)[0] {
		return domain.Errorf(domain.EConflict, "moved")
	}
	return nil
}

// equivalenceTables are every table a write plan writes, and the search
// indexer's queue its trigger fills (migration 00028).
var equivalenceTables = []string{"operations", "operation_search_queue", "attempts", "content_versions", "audit_events", "notifications"}

// indexedTables are the search side table, which the search indexer
// writes from the queue.
var indexedTables = []string{"operation_search"}

// TestRenderers_equivalent: the same plans — every transition kind, with
// and without notifications, a begun claim, a revision and its approval, a
// rejection and its supersede, a change of two events, a flush of several registrations and of
// several begins with a stale one and one that needs a live lease, of
// several registrations of which some are held for an open twin, of
// several of one content that race (the later ones see the first), a note
// on a purged operation flushed with settles that write result_data —
// written through the GORM transaction, the single statement and the
// multi-row statement into three fresh databases leave every row of every
// table the same, byte for byte, audit hashes included (positions follow
// each stream's order in every database), and every renderer gives each
// change the same answer.
func TestRenderers_equivalent(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	all := []*store.Store{storetest.New(t), storetest.New(t), storetest.New(t)}
	tee := teeStore{Store: all[0], all: all, t: t}
	cards := testCards()
	notified := cards["crm.task.create"]
	notified.Name, notified.Notify = "crm.task.notified", []domain.Destination{{URL: "https://hooks.example.com/desk"}}
	cards[notified.Name] = notified
	l := domain.NewLedger(tee, cards)
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	register := func(key, typ string, claim *domain.Claim) domain.RegisterResult {
		t.Helper()
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: typ, Content: json.RawMessage(`{"to":"` + key + `"}`), Claim: claim})
		if err != nil || !res.Created {
			t.Fatalf("register %s: %+v %v", key, res, err)
		}
		return res
	}
	token := func(id string) int64 {
		op, _, err := all[0].Load(ctx, "", id)
		if err != nil {
			t.Fatal(err)
		}
		return op.LeaseToken
	}

	// A registration alone; claimed by id, begun, heartbeat, completed.
	done := register("evt_done", "crm.task.create", nil).Operation.ID
	must(l.Workflow.Claim(ctx, wf, done, domain.Claim{Worker: "w1"}))
	must(l.Workflow.Begin(ctx, wf, done, domain.Begin{LeaseToken: token(done)}))
	must(l.Workflow.Heartbeat(ctx, wf, done, domain.Heartbeat{LeaseToken: token(done), Lease: time.Minute}))
	must(l.Workflow.Settle(ctx, wf, done, domain.Settle{LeaseToken: token(done), Outcome: domain.OutcomeCompleted,
		Result: &domain.Result{Ref: "crm_1", Data: json.RawMessage(`{"id":1}`)}}))
	// A registration with a claim: a doubtful outcome that notifies the
	// desk, a note and its resolution.
	retried := register("evt_retry", "crm.task.notified", &domain.Claim{Worker: "w1"}).Operation.ID
	must(l.Workflow.Begin(ctx, wf, retried, domain.Begin{LeaseToken: token(retried)}))
	must(l.Workflow.Settle(ctx, wf, retried, domain.Settle{LeaseToken: token(retried), Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "no answer"}}))
	// A claim by id that begins at once; a retryable failure.
	again := register("evt_again_later", "crm.task.create", nil).Operation.ID
	must(l.Workflow.Claim(ctx, wf, again, domain.Claim{Worker: "w2", Begin: true}))
	must(l.Workflow.Settle(ctx, wf, again, domain.Settle{LeaseToken: token(again), Outcome: domain.OutcomeFailedRetryable,
		Error: &domain.ErrorInfo{Class: domain.ClassTransient, Code: "503", Message: "busy"}}))
	must(l.Desk.AddNote(ctx, operator, retried, domain.Note{Text: "calling the provider"}))
	must(l.Desk.Resolve(ctx, operator, retried, domain.Resolve{Action: domain.ResolveConfirmExecuted,
		Result: &domain.Result{Ref: "crm_2"}, Reason: "found it"}))
	// A begun claim at registration, failed for good onto the desk.
	failed := register("evt_fail", "crm.task.create", &domain.Claim{Worker: "w1", Begin: true}).Operation.ID
	must(l.Workflow.Settle(ctx, wf, failed, domain.Settle{LeaseToken: token(failed), Outcome: domain.OutcomeFailedTerminal,
		Error: &domain.ErrorInfo{Class: domain.ClassValidation, Code: "422", Message: "bad"}}))
	must(l.Desk.Resolve(ctx, operator, failed, domain.Resolve{Action: domain.ResolveCancel, Reason: "bad input"}))
	// Approval: a revision and its approval; a rejection and its supersede.
	approved := register("evt_approve", "coupon.issue", nil).Operation.ID
	must(l.Desk.Revise(ctx, operator, approved, domain.Revise{Content: json.RawMessage(`{"to":"bob"}`), Reason: "typo"}))
	must(l.Desk.Approve(ctx, approver, approved, domain.Approve{ContentVersion: 2, Reason: "ok"}))
	rejected := register("evt_reject", "coupon.issue", nil).Operation.ID
	must(l.Desk.Reject(ctx, approver, rejected, domain.Reject{ContentVersion: 1, Reason: "no"}))
	must(l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_again", Type: "coupon.issue",
		Content: json.RawMessage(`{"to":"eve"}`), Supersedes: rejected}))
	// A change of two events in one statement: a begun lease of a provider
	// that deduplicates by key expires, and the system re-sends it under
	// the same key at once (lease_expired, then resend_guarded).
	lapsed := register("evt_lapsed", "mail.send", &domain.Claim{Worker: "w1", Begin: true}).Operation
	expiry, err := domain.Decide(lapsed, domain.ExpireLease{}, domain.Env{Card: cards["mail.send"],
		Now: lapsed.Lease.ExpiresAt.Add(time.Second), Actor: domain.System, NewID: (&domain.IDSource{}).New, Jitter: func() float64 { return 0 }})
	if err != nil || len(expiry.Events) != 2 {
		t.Fatalf("the lapsed lease's expiry: %d events, %v", len(expiry.Events), err)
	}
	if written := tee.write([]domain.Change{expiry}, false); !written[0] {
		t.Errorf("the expiry of two events was not written")
	}
	// A flush: several registrations together, then their begins — one
	// decided on a version that has moved, one on the lease cache.
	ids := &domain.IDSource{}
	var regs, begins []domain.Change
	for i := range 5 {
		regs = append(regs, newRegistration(t, ids, fmt.Sprintf("evt_flush%d:task", i)))
	}
	if created := tee.write(regs, true); slices.Contains(created, false) {
		t.Fatalf("created %v", created)
	}
	env := domain.Env{Card: cards["crm.task.create"], Now: time.Now().UTC().Truncate(time.Microsecond), Actor: wf,
		NewID: ids.New, Jitter: func() float64 { return 0 }}
	for i, r := range regs {
		ch, err := domain.Decide(r.Op, domain.Begin{LeaseToken: r.Op.LeaseToken}, env)
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 1:
			ch.FromVersion-- // stale
		case 2:
			ch.LiveLease = true
		}
		begins = append(begins, ch)
	}
	if written := tee.write(begins, false); !slices.Equal(written, []bool{true, false, true, true, true}) {
		t.Errorf("begins written %v, want all but the stale one", written)
	}
	// A flush of registrations held for no open twin (NoOpenTwin): the
	// begun ones above are action_pending with the content {"a":1}, so the
	// two of that content are refused, the one of other content and the
	// two not held for it are written.
	var twins []domain.Change
	for i, c := range []string{`{"a":1}`, `{"a":1}`, `{"a":2}`, `{"a":1}`, `{"a":1}`} {
		ch := newRegistrationOf(t, ids, fmt.Sprintf("evt_twin%d:task", i), c)
		ch.NoOpenTwin = i < 3
		twins = append(twins, ch)
	}
	if written := tee.write(twins, true); !slices.Equal(written, []bool{false, false, true, true, true}) {
		t.Errorf("registrations held for no twin written %v, want the twins of open operations refused", written)
	}
	// A flush of registrations claimed and begun, three of one new content
	// (the twin race): the multi-row statement holds the first of them, the
	// later two follow it on their own and meet it.
	var race []domain.Change
	for i, c := range []string{`{"a":3}`, `{"a":4}`, `{"a":3}`, `{"a":5}`, `{"a":3}`, `{"a":6}`} {
		race = append(race, twinRegistration(t, ids, fmt.Sprintf("evt_race%d:task", i), c))
	}
	if written := tee.write(race, true); !slices.Equal(written, []bool{true, true, false, true, false, true}) {
		t.Errorf("registrations of one content in one flush written %v, want the first of them only", written)
	}

	// A content purge (the same instant on every database), then a note
	// on the purged operation decided on its load from before the purge.
	before, _, err := all[0].Load(ctx, "", done)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if n, err := s.PurgeContent(ctx, time.Now().Add(time.Hour), 100); err != nil || n == 0 {
			t.Fatalf("purge: %d %v", n, err)
		}
		must(nil, store.Exec(ctx, s, "UPDATE operations SET content_purged_at = '2026-01-01T00:00:00Z' WHERE content_purged_at IS NOT NULL"))
	}
	note, err := domain.Decide(before, domain.Note{Text: "after the purge"}, domain.Env{Card: cards["crm.task.create"],
		Now: time.Now().UTC().Truncate(time.Microsecond), Actor: operator, NewID: (&domain.IDSource{}).New})
	if err != nil {
		t.Fatal(err)
	}
	// In one flush with settles that write result_data: the multi-row
	// statement sends the note's row its result_data as decided on, and
	// must keep the purge.
	settles := []domain.Change{note}
	for _, i := range []int{0, 2, 3, 4} {
		op, _, err := all[0].Load(ctx, "", regs[i].Op.ID)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := domain.Decide(op, domain.Settle{LeaseToken: op.LeaseToken, Outcome: domain.OutcomeCompleted,
			Result: &domain.Result{Ref: fmt.Sprintf("crm_f%d", i), Data: json.RawMessage(`{"ok":true}`)}}, env)
		if err != nil {
			t.Fatal(err)
		}
		settles = append(settles, ch)
	}
	if written := tee.write(settles, false); slices.Contains(written, false) {
		t.Errorf("the note and settles written %v", written)
	}

	compare := func(tables []string) {
		t.Helper()
		for _, table := range tables {
			equivalent(t, all, renderers, table)
		}
	}
	compare(equivalenceTables)
	for _, s := range all {
		if _, err := s.IndexSearch(ctx, 1000); err != nil {
			t.Fatal(err)
		}
	}
	compare(indexedTables)
	for i, s := range all {
		posFollowsSeq(t, renderers[i], s)
	}
}

// equivalent: every database holds the same rows of table as the first.
// An event's pos orders every event; the order of two streams' events
// within one statement (the multi-row one) is the database's, as for
// concurrent callers' statements. Within a stream it must follow seq,
// checked by posFollowsSeq.
func equivalent(t *testing.T, all []*store.Store, renderers []string, table string) {
	t.Helper()
	var less []string
	if table == "audit_events" {
		less = []string{"pos"}
	}
	want, err := store.TableRows(all[0], table, less...)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Errorf("%s: no rows written", table)
	}
	for i, s := range all[1:] {
		got, err := store.TableRows(s, table, less...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			diffRows(t, renderers[i+1], table, got, want)
		}
	}
}

// posFollowsSeq: within each stream, every database's positions follow
// the sequence numbers.
func posFollowsSeq(t *testing.T, via string, s *store.Store) {
	t.Helper()
	bad, err := store.TableRows(s, "(SELECT a.stream, a.seq FROM audit_events a JOIN audit_events b ON a.stream = b.stream AND a.seq < b.seq AND a.pos > b.pos)")
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 {
		t.Errorf("%s: events out of their stream's order: %v", via, bad)
	}
}

// diffRows reports the first rows that differ.
func diffRows(t *testing.T, via, table string, got, want []string) {
	t.Helper()
	for i := range max(len(got), len(want)) {
		g, w := "(none)", "(none)"
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Errorf("%s: %s row %d differs from the transaction's:\n got %s\nwant %s", table, via, i, g, w)
			return
		}
	}
}
