package store_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// registerClaimed registers a claimed operation (lease token 1), then
// reads it once, as a running replica has read something before: until its
// first load a store knows nothing of the database's clock and remembers
// nothing for the lease holder's calls.
func registerClaimed(t *testing.T, l *domain.Ledger, key string) domain.Operation {
	t.Helper()
	ctx := context.Background()
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
		Content: json.RawMessage(`{"a":"` + key + `"}`), Claim: &domain.Claim{Worker: "w1"}})
	if err != nil || res.Claim == nil || res.Claim.Lease.Token != 1 {
		t.Fatalf("register %s: %+v %v", key, res, err)
	}
	if _, err := l.Workflow.Get(ctx, wf, res.Operation.ID); err != nil {
		t.Fatal(err)
	}
	return res.Operation
}

// expireInDB moves the lease's end into the past in the database only, as
// time would, with nothing swept yet: the replica's record still shows it
// live.
func expireInDB(t *testing.T, s *store.Store, id string) {
	t.Helper()
	if err := store.Exec(context.Background(), s, "UPDATE operations SET lease_expires_at = ? WHERE id = ?",
		time.Now().UTC().Add(-time.Minute), id); err != nil {
		t.Fatal(err)
	}
}

func checkChain(t *testing.T, l *domain.Ledger, op domain.Operation) []domain.AuditEvent {
	t.Helper()
	events, err := l.Workflow.Timeline(context.Background(), wf, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.Hash != domain.HashEvent(e) || (i > 0 && e.PrevHash != events[i-1].Hash) {
			t.Fatalf("event %d of %s breaks the chain: %+v", i, op.ID, e)
		}
	}
	if len(events) == 0 || op.AuditHead != events[len(events)-1].Hash {
		t.Fatalf("%s: audit head %q is not the last event's hash", op.ID, op.AuditHead)
	}
	return events
}

// TestLeaseCache_expiredByDatabaseClock: a begin or settle whose lease ran
// out by the database's clock, before any sweep, is refused as a stale
// lease and the expiry is applied, exactly as a loaded decision would —
// though this replica remembers the lease as live.
func TestLeaseCache_expiredByDatabaseClock(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())

	notBegun := registerClaimed(t, l, "evt_exp:a")
	expireInDB(t, s, notBegun.ID)
	if _, err := l.Workflow.Begin(ctx, wf, notBegun.ID, domain.Begin{LeaseToken: 1}); domain.ErrorCode(err) != domain.EStaleLease {
		t.Fatalf("begin after the lease ran out: %v", err)
	}
	if got, _, _ := s.Load(ctx, "", notBegun.ID); got.State != domain.Received || got.Lease != nil {
		t.Fatalf("a lease that ran out before begin: %s %+v", got.State, got.Lease)
	}

	begun := registerClaimed(t, l, "evt_exp:b")
	if _, err := l.Workflow.Begin(ctx, wf, begun.ID, domain.Begin{LeaseToken: 1}); err != nil {
		t.Fatal(err)
	}
	expireInDB(t, s, begun.ID)
	_, err := l.Workflow.Settle(ctx, wf, begun.ID, domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "crm_1"}})
	if domain.ErrorCode(err) != domain.EStaleLease {
		t.Fatalf("settle after the lease ran out: %v", err)
	}
	got, _, _ := s.Load(ctx, "", begun.ID)
	if got.State != domain.UnknownOutcome || got.Result != nil {
		t.Fatalf("a lease that ran out after begin: %s %+v", got.State, got.Result)
	}
	checkChain(t, l, got)

	// A terminal failure puts the operation on the desk with its outbox
	// rows: the transaction path, which checks the lease the same way.
	cards := testCards()
	notifying := cards["crm.task.create"]
	notifying.NotifyURL = "https://hooks.example.com/handoff"
	cards[notifying.Name] = notifying
	l = domain.NewLedger(s, cards)
	terminal := registerClaimed(t, l, "evt_exp:c")
	if _, err := l.Workflow.Begin(ctx, wf, terminal.ID, domain.Begin{LeaseToken: 1}); err != nil {
		t.Fatal(err)
	}
	expireInDB(t, s, terminal.ID)
	_, err = l.Workflow.Settle(ctx, wf, terminal.ID, domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeFailedTerminal,
		Error: &domain.ErrorInfo{Class: domain.ClassValidation, Code: "bad"}})
	if domain.ErrorCode(err) != domain.EStaleLease {
		t.Fatalf("terminal settle after the lease ran out: %v", err)
	}
	if got, _, _ := s.Load(ctx, "", terminal.ID); got.State != domain.UnknownOutcome || got.LastError == nil || got.LastError.Code != "lease_expired" {
		t.Fatalf("a lease that ran out before a terminal settle: %s %+v", got.State, got.LastError)
	}
}

// TestLeaseCache_anotherReplicaMoved: another replica expires the lease and
// claims again; this replica's begin with the old token is refused and
// writes nothing, and with the new token it succeeds.
func TestLeaseCache_anotherReplicaMoved(t *testing.T) {
	ctx := context.Background()
	url := storetest.URL(t)
	open := func() *store.Store {
		s, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s1, s2 := open(), open()
	l1, l2 := domain.NewLedger(s1, testCards()), domain.NewLedger(s2, testCards())

	op := registerClaimed(t, l1, "evt_rep:a")
	expireInDB(t, s2, op.ID)
	c, err := l2.Workflow.Claim(ctx, wf, op.ID, domain.Claim{Worker: "w2"})
	if err != nil || c.Lease.Token != 2 {
		t.Fatalf("the other replica's claim: %+v %v", c, err)
	}
	before, _, _ := s2.Load(ctx, "", op.ID)
	if _, err := l1.Workflow.Begin(ctx, wf, op.ID, domain.Begin{LeaseToken: 1}); domain.ErrorCode(err) != domain.EStaleLease {
		t.Fatalf("begin with the old token: %v", err)
	}
	_, err = l1.Workflow.Settle(ctx, wf, op.ID, domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeFailedRetryable,
		Error: &domain.ErrorInfo{Class: domain.ClassTransient}})
	if domain.ErrorCode(err) != domain.EStaleLease {
		t.Fatalf("settle with the old token: %v", err)
	}
	after, _, _ := s2.Load(ctx, "", op.ID)
	if !reflect.DeepEqual(before, after) {
		t.Fatalf("a refused call wrote:\n%+v\n%+v", before, after)
	}
	if _, err := l1.Workflow.Begin(ctx, wf, op.ID, domain.Begin{LeaseToken: 2}); err != nil {
		t.Fatalf("begin with the new token on this replica: %v", err)
	}
	done, err := l1.Workflow.Settle(ctx, wf, op.ID, domain.Settle{LeaseToken: 2, Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "crm_2"}})
	if err != nil || done.State != domain.Completed {
		t.Fatalf("settle with the new token: %+v %v", done, err)
	}
	checkChain(t, l1, done)
}

// TestLeaseCache_hitSkipsTheLoad: after register and claim, the holder's
// begin and settle read nothing.
func TestLeaseCache_hitSkipsTheLoad(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	op := registerClaimed(t, l, "evt_hit:a")
	loads := store.Loads(s)
	if _, err := l.Workflow.Begin(ctx, wf, op.ID, domain.Begin{LeaseToken: 1}); err != nil {
		t.Fatal(err)
	}
	done, err := l.Workflow.Settle(ctx, wf, op.ID, domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "crm_1"}})
	if err != nil || done.State != domain.Completed {
		t.Fatalf("settle: %+v %v", done, err)
	}
	if n := store.Loads(s) - loads; n != 0 {
		t.Fatalf("begin and settle loaded %d times", n)
	}
}

// TestLeaseCache_writesWhatALoadWouldSee: what the replica remembers is
// what a load reads back, field by field, and a lifecycle decided on it
// leaves the same operation and audit trail as one decided on loads.
func TestLeaseCache_writesWhatALoadWouldSee(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	same := func(id string, token int64) {
		t.Helper()
		cached, _, ok := s.Leased(id, token)
		loaded, _, err := s.Load(ctx, "", id)
		if !ok || err != nil || !reflect.DeepEqual(cached, loaded) {
			t.Fatalf("remembered and loaded differ (%v %v):\n%#v\n%#v", ok, err, cached, loaded)
		}
	}
	run := func(key string, forget bool) (domain.Operation, []domain.AuditEvent) {
		op := registerClaimed(t, l, key)
		same(op.ID, 1)
		if forget {
			store.ForgetLeased(s, op.ID)
		}
		if _, err := l.Workflow.Begin(ctx, wf, op.ID, domain.Begin{LeaseToken: 1}); err != nil {
			t.Fatal(err)
		}
		same(op.ID, 1)
		if forget {
			store.ForgetLeased(s, op.ID)
		}
		done, err := l.Workflow.Settle(ctx, wf, op.ID, domain.Settle{LeaseToken: 1, Outcome: domain.OutcomeCompleted,
			Result: &domain.Result{Ref: "crm_1", Data: json.RawMessage(`{"x":1}`)}})
		if err != nil {
			t.Fatal(err)
		}
		loaded, _, _ := s.Load(ctx, "", op.ID)
		if !reflect.DeepEqual(done, loaded) {
			t.Fatalf("settled and loaded differ:\n%#v\n%#v", done, loaded)
		}
		if _, _, ok := s.Leased(op.ID, 1); ok {
			t.Fatal("a settled operation is still remembered as leased")
		}
		return loaded, checkChain(t, l, loaded)
	}
	a, ea := run("evt_same:a", false)
	b, eb := run("evt_same:b", true)
	// The two differ only in what is each operation's own: ids, keys, times, hashes.
	norm := func(op domain.Operation) domain.Operation {
		op.ID, op.Key, op.EventID, op.AuditHead = "", "", "", ""
		op.CreatedAt, op.UpdatedAt, op.FirstAttemptAt, op.ProviderKeyFirstSentAt = time.Time{}, time.Time{}, nil, nil
		op.ProviderKey = ""
		op.Fingerprint, op.IdentityHash, op.ContentSHA256, op.Content = "", "", "", nil // the content names its key
		return op
	}
	if !reflect.DeepEqual(norm(a), norm(b)) {
		t.Fatalf("remembered and loaded lifecycles differ:\n%#v\n%#v", norm(a), norm(b))
	}
	if len(ea) != len(eb) {
		t.Fatalf("events: %d and %d", len(ea), len(eb))
	}
	for i := range ea {
		if ea[i].Action != eb[i].Action || ea[i].FromState != eb[i].FromState || ea[i].ToState != eb[i].ToState {
			t.Fatalf("event %d: %+v and %+v", i, ea[i], eb[i])
		}
	}
}

// TestLeaseCache_liveLeaseInOneFlush: changes decided on the remembered
// operations and written together by the multi-row statement each need
// their own lease live by the database's clock; a dead one is that
// change's conflict alone, and nothing of it is written.
func TestLeaseCache_liveLeaseInOneFlush(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	ids := &domain.IDSource{}
	var chs []domain.Change
	var ops []domain.Operation
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		ops = append(ops, registerClaimed(t, l, "evt_flush:"+k))
	}
	expireInDB(t, s, ops[2].ID)
	for _, op := range ops {
		cached, now, ok := s.Leased(op.ID, 1)
		if !ok {
			t.Fatalf("%s is not remembered", op.ID)
		}
		env := domain.Env{Card: testCards()["crm.task.create"], Now: now.Truncate(time.Microsecond), Actor: wf,
			NewID: ids.New, Jitter: func() float64 { return 0 }}
		ch, err := domain.Decide(cached, domain.Begin{LeaseToken: 1}, env)
		if err != nil {
			t.Fatal(err)
		}
		ch.LiveLease = true
		chs = append(chs, ch)
	}
	if plan := store.MultiRow(chs, false); len(plan) != 1 || plan[0] != 5 {
		t.Fatalf("not one multi-row statement: %v", plan)
	}
	written, errs := store.ApplyTogether(s, chs)
	for i, op := range ops {
		got, _, _ := s.Load(ctx, "", op.ID)
		want := i != 2
		if errs[i] != nil || written[i] != want || (got.State == domain.ActionPending) != want {
			t.Fatalf("%d: written %v (%v), state %s", i, written[i], errs[i], got.State)
		}
	}
	if events, _ := l.Workflow.Timeline(ctx, wf, ops[2].ID); len(events) != 1 { // the registration with its claim
		t.Fatalf("the refused begin wrote events: %d", len(events))
	}
}

// TestLeaseCache_noGuessBeforeTheFirstLoad: a store that has read nothing
// yet knows nothing of the database's clock, so the first lease holder's
// begin loads; the next one does not.
func TestLeaseCache_noGuessBeforeTheFirstLoad(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	var ids []string
	for _, k := range []string{"a", "b"} {
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_first:" + k, Type: "crm.task.create",
			Content: json.RawMessage(`{"a":"` + k + `"}`), Claim: &domain.Claim{Worker: "w1"}})
		if err != nil || res.Claim == nil {
			t.Fatalf("register: %+v %v", res, err)
		}
		ids = append(ids, res.Operation.ID)
	}
	for i, want := range []int64{1, 1} {
		if _, err := l.Workflow.Begin(ctx, wf, ids[i], domain.Begin{LeaseToken: 1}); err != nil {
			t.Fatal(err)
		}
		if n := store.Loads(s); n != want {
			t.Fatalf("after begin %d: %d loads, want %d", i, n, want)
		}
	}
}
