package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestGroupCommit_multiRow: a flush of begins is one multi-row statement,
// and so is a flush of settles. A begin decided on a version that has
// moved, and the second of two begins of one operation, are each that
// change's conflict alone; every other change is written, with its
// attempt and its audit events, and every chain stays whole.
func TestGroupCommit_multiRow(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	ids := &domain.IDSource{}
	var regs []domain.Change
	for i := range 6 {
		regs = append(regs, newRegistration(t, ids, fmt.Sprintf("evt_mr%d:task", i)))
	}
	if plan := store.MultiRow(regs, true); !slices.Equal(plan, []int{6}) {
		t.Fatalf("six registrations are sent as %v, want one statement of 6", plan)
	}
	if created, errs := store.CreateTogether(s, regs); slices.Contains(created, false) || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Fatalf("created %v, errs %v", created, errs)
	}
	env := func() domain.Env {
		return domain.Env{Card: testCards()["crm.task.create"], Now: time.Now().UTC().Truncate(time.Microsecond),
			Actor: wf, NewID: ids.New, Jitter: func() float64 { return 0 }}
	}
	decide := func(id string, cmd domain.Command) domain.Change {
		t.Helper()
		op, _, err := s.Load(ctx, "", id)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := domain.Decide(op, cmd, env())
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	token := func(i int) int64 { return regs[i].Op.LeaseToken }

	var begins []domain.Change
	for i := range regs {
		begins = append(begins, decide(regs[i].Op.ID, domain.Begin{LeaseToken: token(i)}))
	}
	// Operation 2 moves on (a heartbeat) after its begin was decided;
	// operation 4's begin is sent twice.
	if err := s.Apply(ctx, decide(regs[2].Op.ID, domain.Heartbeat{LeaseToken: token(2), Lease: 30 * time.Second})); err != nil {
		t.Fatal(err)
	}
	begins = append(begins, decide(regs[4].Op.ID, domain.Begin{LeaseToken: token(4)}))
	if plan := store.MultiRow(begins[:3], false); !slices.Equal(plan, []int{0, 0, 0}) {
		t.Fatalf("three begins are sent as %v, want a statement each (fewer than the multi-row minimum)", plan)
	}
	if plan := store.MultiRow(begins, false); !slices.Equal(plan, []int{6, 0}) {
		t.Fatalf("the begins are sent as %v, want one statement of 6 and the repeat alone", plan)
	}
	written, errs := store.ApplyTogether(s, begins)
	for i, ok := range written {
		if errs[i] != nil {
			t.Fatalf("begin %d: %v", i, errs[i])
		}
		if want := i != 2 && i != 6; ok != want {
			t.Fatalf("begin %d written %v, want %v (all: %v)", i, ok, want, written)
		}
	}

	var settles []domain.Change
	for _, i := range []int{0, 1, 3, 4, 5} {
		settles = append(settles, decide(regs[i].Op.ID, domain.Settle{LeaseToken: token(i), Outcome: domain.OutcomeCompleted,
			Result: &domain.Result{Ref: "crm_" + regs[i].Op.Key}}))
	}
	if plan := store.MultiRow(settles, false); !slices.Equal(plan, []int{5}) {
		t.Fatalf("the settles are sent as %v, want one statement of 5", plan)
	}
	if written, errs := store.ApplyTogether(s, settles); slices.Contains(written, false) || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Fatalf("settles written %v, errs %v", written, errs)
	}

	if n := store.Reruns(s); n != 0 {
		t.Fatalf("%d flushes failed whole and were re-run change by change", n)
	}
	for i, reg := range regs {
		op, _, err := s.Load(ctx, "", reg.Op.ID)
		if err != nil {
			t.Fatal(err)
		}
		atts, err := s.Attempts(ctx, op.ID)
		if err != nil || len(atts) != 1 {
			t.Fatalf("%d: attempts %v %v", i, atts, err)
		}
		if i == 2 {
			if op.State != domain.Processing || atts[0].BeganAt != nil {
				t.Fatalf("the stale begin was written: %s %+v", op.State, atts[0])
			}
		} else if op.State != domain.Completed || op.Result == nil || op.Result.Ref != "crm_"+reg.Op.Key ||
			atts[0].BeganAt == nil || atts[0].Outcome != "completed" {
			t.Fatalf("%d: not completed as settled: %s %+v %+v", i, op.State, op.Result, atts[0])
		}
		tl, err := s.Timeline(ctx, op.ID)
		if err != nil {
			t.Fatal(err)
		}
		for j, e := range tl {
			if e.Seq != int64(j+1) || e.Hash != domain.HashEvent(e) || (j > 0 && e.PrevHash != tl[j-1].Hash) {
				t.Fatalf("%d: event %d breaks the chain: %+v", i, j, e)
			}
		}
		if len(tl) == 0 || op.AuditHead != tl[len(tl)-1].Hash || tl[len(tl)-1].Seq != op.Version {
			t.Fatalf("%d: the operation's head is not its chain's last event", i)
		}
	}
}

// TestGroupCommit_multiRowBegunClaims: claims that begin at once, as
// registrations (one multi-row insert) and as claims of registered
// operations (one multi-row update), are written as decided: action_pending,
// the attempt inserted with began_at, one registered_and_began or
// claimed_and_began event each, and
// whole chains — as the single statement and GORM write them.
func TestGroupCommit_multiRowBegunClaims(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	ids := &domain.IDSource{}
	env := func() domain.Env {
		return domain.Env{Card: testCards()["crm.task.create"], Now: time.Now().UTC().Truncate(time.Microsecond),
			Actor: wf, NewID: ids.New, Jitter: func() float64 { return 0 }}
	}
	newOp := func(key string, claim *domain.Claim) domain.Change {
		ch, err := domain.NewOperation(domain.Registration{Namespace: wf.Namespace, Key: key, Type: "crm.task.create",
			Claim: claim}, []byte(`{"a":1}`), false, env())
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	var begun, plain []domain.Change
	for i := range 5 {
		begun = append(begun, newOp(fmt.Sprintf("evt_bc%d:task", i), &domain.Claim{Worker: "w1", Begin: true}))
		plain = append(plain, newOp(fmt.Sprintf("evt_pc%d:task", i), nil))
	}
	// Alone, each takes the single statement (one round trip), not GORM.
	if !store.FastPath(s, begun[0]) {
		t.Fatal("a begun registration goes through GORM, not the single statement")
	}
	if plan := store.MultiRow(begun, true); !slices.Equal(plan, []int{5}) {
		t.Fatalf("five begun registrations are sent as %v, want one statement of 5", plan)
	}
	all := append(append([]domain.Change{}, begun...), plain...)
	if created, errs := store.CreateTogether(s, all); slices.Contains(created, false) || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Fatalf("created %v, errs %v", created, errs)
	}
	var claims []domain.Change
	for _, reg := range plain {
		op, _, err := s.Load(ctx, "", reg.Op.ID)
		if err != nil {
			t.Fatal(err)
		}
		ch, err := domain.Decide(op, domain.Claim{Worker: "w2", Begin: true}, env())
		if err != nil {
			t.Fatal(err)
		}
		claims = append(claims, ch)
	}
	if !store.FastPath(s, claims[0]) {
		t.Fatal("a begun claim goes through GORM, not the single statement")
	}
	if plan := store.MultiRow(claims, false); !slices.Equal(plan, []int{5}) {
		t.Fatalf("five begun claims are sent as %v, want one statement of 5", plan)
	}
	if written, errs := store.ApplyTogether(s, claims); slices.Contains(written, false) || slices.ContainsFunc(errs, func(e error) bool { return e != nil }) {
		t.Fatalf("claims written %v, errs %v", written, errs)
	}
	if n := store.Reruns(s); n != 0 {
		t.Fatalf("%d flushes failed whole and were re-run change by change", n)
	}
	for _, ch := range append(begun, claims...) {
		op, _, err := s.Load(ctx, "", ch.Op.ID)
		if err != nil {
			t.Fatal(err)
		}
		atts, err := s.Attempts(ctx, op.ID)
		if err != nil || len(atts) != 1 || atts[0].BeganAt == nil || !atts[0].BeganAt.Equal(ch.Op.UpdatedAt) {
			t.Fatalf("%s: attempts %+v (%v), want one with began_at", op.Key, atts, err)
		}
		if op.State != domain.ActionPending || op.ProviderKeyFirstSentAt == nil || op.Version != ch.Op.Version || op.AuditHead != ch.Op.AuditHead {
			t.Fatalf("%s: %s v%d sent %v, decided %s v%d", op.Key, op.State, op.Version, op.ProviderKeyFirstSentAt, ch.Op.State, ch.Op.Version)
		}
		// A registration that began is one event; a claim that began is
		// one after the registration's.
		want := []string{"registered", domain.ActionClaimedAndBegan}
		if ch.FromVersion == 0 {
			want = []string{domain.ActionRegisteredAndBegan}
		}
		tl, err := s.Timeline(ctx, op.ID)
		if err != nil || len(tl) != len(want) {
			t.Fatalf("%s: timeline %+v (%v), want %v", op.Key, tl, err, want)
		}
		for i, e := range tl {
			if e.Action != want[i] || e.Seq != int64(i+1) || e.Hash != domain.HashEvent(e) || (i > 0 && e.PrevHash != tl[i-1].Hash) {
				t.Fatalf("%s: event %d %+v, want %s chained", op.Key, i, e, want[i])
			}
		}
	}
}
