package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// The twin race: registrations of one content under different keys that
// arrive at once must still run once. Each looks for an open twin in its
// own write (domain.Change.NoOpenTwin); without a turn per fingerprint two
// overlapping transactions (READ COMMITTED: neither sees the other's row)
// or two rows of one multi-row statement (one snapshot) both find none,
// and with claim.begin both are handed out and sent.

// racers is how many registrations of one content arrive at once, and
// raceRounds how many times a test races them (each round new content).
const (
	racers     = 12
	raceRounds = 6
)

// checkOneRuns: of the registrations of one content, exactly one was
// handed out (claimed and begun: action_pending), and every other is held
// twin_unresolved naming it.
func checkOneRuns(t *testing.T, round int, res []domain.RegisterResult) {
	t.Helper()
	var ran []domain.RegisterResult
	for _, r := range res {
		if r.Claim != nil || r.Operation.State == domain.ActionPending {
			ran = append(ran, r)
		}
	}
	if len(ran) != 1 {
		keys := make([]string, len(ran))
		for i, r := range ran {
			keys[i] = r.Operation.Key
		}
		t.Errorf("round %d: %d of %d registrations of one content were handed out (%v), want exactly 1",
			round, len(ran), len(res), keys)
		return
	}
	winner := ran[0].Operation
	for _, r := range res {
		op := r.Operation
		if op.ID == winner.ID {
			continue
		}
		if op.State != domain.AwaitingApproval || op.LastError == nil || op.LastError.Code != domain.CodeTwinUnresolved ||
			!strings.Contains(op.LastError.Message, winner.ID) {
			t.Errorf("round %d: %s is %s %+v, want held twin_unresolved naming %s", round, op.Key, op.State, op.LastError, winner.ID)
		}
	}
}

// raceRegistrations registers racers keys of one content at once through
// the Ledger, with claim.begin, and checks that one runs. gate, when set,
// is called before each round's racers start and returns what to call
// once they have.
func raceRegistrations(t *testing.T, l *domain.Ledger, gate func(round int) (started func())) {
	t.Helper()
	ctx := context.Background()
	for round := range raceRounds {
		content := json.RawMessage(fmt.Sprintf(`{"title":"race %d","owner":"u_1"}`, round))
		res := make([]domain.RegisterResult, racers)
		errs := make([]error, racers)
		start := make(chan struct{})
		var started func()
		if gate != nil {
			started = gate(round)
		}
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				<-start
				res[i], errs[i] = l.Workflow.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("evt_race%d:%d", round, i),
					Type: "crm.task.create", Content: content, Claim: &domain.Claim{Worker: "w1", Begin: true}})
			})
		}
		close(start)
		if started != nil {
			started()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil || !res[i].Created {
				t.Fatalf("round %d: register %d: %+v %v", round, i, res[i], err)
			}
		}
		checkOneRuns(t, round, res)
	}
}

// TestRegister_concurrentTwinsRunOnce: many registrations of one content
// under different keys at once, through the Ledger and the store as they
// run: group commit on PostgreSQL with its default writers, with as many
// writers as racers (their flushes overlap), and with every racer's write
// queued behind one flush, so that they share the next one — its
// multi-row statement. One is handed out; every other is held for a
// person, naming it.
func TestRegister_concurrentTwinsRunOnce(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		raceRegistrations(t, domain.NewLedger(storetest.New(t), testCards()), nil)
	})
	t.Run("twins_allowed", func(t *testing.T) {
		// A card that allows twins runs them all, at once as one by one.
		cards := testCards()
		c := cards["crm.task.create"]
		c.TwinsAllowed = true
		cards[c.Name] = c
		l := domain.NewLedger(storetest.New(t), cards)
		ctx := context.Background()
		res := make([]domain.RegisterResult, racers)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				res[i], errs[i] = l.Workflow.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("evt_allowed:%d", i),
					Type: c.Name, Content: json.RawMessage(`{"title":"digest"}`), Claim: &domain.Claim{Worker: "w1", Begin: true}})
			})
		}
		wg.Wait()
		for i := range racers {
			if errs[i] != nil || res[i].Claim == nil || res[i].Operation.State != domain.ActionPending {
				t.Fatalf("twin %d of a card that allows twins: %s %+v %v", i, res[i].Operation.State, res[i].Operation.LastError, errs[i])
			}
		}
	})
	t.Run("many_writers", func(t *testing.T) {
		needPostgres(t)
		s, err := store.Open(context.Background(), storetest.URL(t), store.Writers(racers))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		raceRegistrations(t, domain.NewLedger(s, testCards()), nil)
	})
	t.Run("one_flush", func(t *testing.T) {
		needPostgres(t)
		u := storetest.URL(t)
		s, err := store.Open(context.Background(), u, store.Writers(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		raceRegistrations(t, domain.NewLedger(s, testCards()), oneFlush(t, s, u))
	})
}

// oneFlush is a gate that makes a round's racers share one flush: the
// store's one writer is kept busy with another registration, whose insert
// waits on a lock of the table held by another connection, until every
// racer's write has queued behind it.
func oneFlush(t *testing.T, s *store.Store, url string) func(round int) func() {
	ctx := context.Background()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ids := &domain.IDSource{}
	wait := func(what string, done func() bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waited 30 s for %s", what)
			}
		}
	}
	return func(round int) func() {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("LOCK TABLE operations IN EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		blocker := twinRegistration(t, ids, fmt.Sprintf("evt_blocker:%d", round), fmt.Sprintf(`{"title":"blocker %d"}`, round))
		blocked := make(chan error, 1)
		go func() {
			_, _, err := s.Create(ctx, blocker)
			blocked <- err
		}()
		wait("the writer to wait on the lock", func() bool {
			var n int
			err := db.QueryRow("SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'operations'::regclass").Scan(&n)
			return err == nil && n > 0
		})
		return func() {
			wait("the racers' writes to queue", func() bool { return store.QueuedWrites(s) == racers })
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			if err := <-blocked; err != nil {
				t.Fatalf("the blocking registration: %v", err)
			}
		}
	}
}

// twinRegistration decides a new operation as Register does for a
// registration that may have a twin: claimed and begun, its write held
// for no open twin.
func twinRegistration(t *testing.T, ids *domain.IDSource, key, content string) domain.Change {
	t.Helper()
	env := domain.Env{Card: testCards()["crm.task.create"], Now: time.Now().UTC().Truncate(time.Microsecond),
		Actor: wf, NewID: ids.New, Jitter: func() float64 { return 0 }}
	ch, err := domain.NewOperation(domain.Registration{Namespace: wf.Namespace, Key: key, Type: "crm.task.create",
		Claim: &domain.Claim{Worker: "w1", Begin: true}}, []byte(content), false, env)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Op.State != domain.ActionPending {
		t.Fatalf("a registration with claim.begin is %s", ch.Op.State)
	}
	ch.NoOpenTwin = true
	return ch
}

// TestGroupCommit_twinsInOneFlush: registrations of one content in one
// flush — as a multi-row statement's rows (at least multiMin of them) and
// as statements of their own — write one operation; the others write
// nothing (the Ledger then holds them), and other content beside them is
// written.
func TestGroupCommit_twinsInOneFlush(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	ids := &domain.IDSource{}
	// Two of one content alone are two statements of one transaction; with
	// others, a multi-row statement.
	for _, tc := range []struct{ twins, others int }{{2, 0}, {2, 3}, {4, 4}, {8, 0}} {
		n := tc.twins
		content := fmt.Sprintf(`{"title":"flush of %d and %d"}`, tc.twins, tc.others)
		var batch []domain.Change
		isTwin := map[string]bool{}
		for i := range max(tc.twins, tc.others) {
			if i < tc.twins {
				ch := twinRegistration(t, ids, fmt.Sprintf("evt_flush%d_%d:%d", tc.twins, tc.others, i), content)
				batch, isTwin[ch.Op.Key] = append(batch, ch), true
			}
			if i < tc.others {
				batch = append(batch, twinRegistration(t, ids, fmt.Sprintf("evt_flush%d_%d:other%d", tc.twins, tc.others, i),
					fmt.Sprintf(`{"title":"other %d of %d and %d"}`, i, tc.twins, tc.others)))
			}
		}
		if parts := store.MultiRow(batch, true); tc.others > 0 && !slices.ContainsFunc(parts, func(n int) bool { return n > 0 }) {
			t.Fatalf("flush of %d and %d: no multi-row statement (%v)", tc.twins, tc.others, parts)
		}
		created, errs := store.CreateTogether(s, batch)
		twins := 0
		for i, ch := range batch {
			if errs[i] != nil {
				t.Fatalf("flush of %d: %s: %v", n, ch.Op.Key, errs[i])
			}
			_, _, err := s.LoadByKey(ctx, wf.Namespace, ch.Op.Key)
			if created[i] != (err == nil) {
				t.Fatalf("flush of %d: %s answered created %v, load %v", n, ch.Op.Key, created[i], err)
			}
			if !isTwin[ch.Op.Key] && !created[i] {
				t.Fatalf("flush of %d: other content %s not written", n, ch.Op.Key)
			}
			if isTwin[ch.Op.Key] && created[i] {
				twins++
			}
		}
		if twins != 1 {
			t.Fatalf("flush of %d registrations of one content (%v) wrote %d, want 1", n, store.MultiRow(batch, true), twins)
		}
	}
}

// TestRegister_concurrentTwinsInTransactions: the same race through the
// transaction renderer, which writes a registration whose change the
// statements do not take (on PostgreSQL: two transactions at once).
func TestRegister_concurrentTwinsInTransactions(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	ids := &domain.IDSource{}
	for round := range raceRounds {
		content := fmt.Sprintf(`{"title":"tx race %d"}`, round)
		chs := make([]domain.Change, racers)
		for i := range chs {
			chs[i] = twinRegistration(t, ids, fmt.Sprintf("evt_txrace%d:%d", round, i), content)
		}
		written := make([]bool, racers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				<-start
				w, errs := store.WriteVia(s, "tx", chs[i:i+1], true)
				if errs[0] != nil {
					t.Errorf("round %d: %s: %v", round, chs[i].Op.Key, errs[0])
				}
				written[i] = w[0]
			})
		}
		close(start)
		wg.Wait()
		n := 0
		for i, w := range written {
			if w {
				n++
			}
			if _, _, err := s.LoadByKey(ctx, wf.Namespace, chs[i].Op.Key); (err == nil) != w {
				t.Fatalf("round %d: %s answered written %v, load %v", round, chs[i].Op.Key, w, err)
			}
		}
		if n != 1 {
			t.Fatalf("round %d: %d transactions of one content wrote, want 1", round, n)
		}
	}
}

// twinSettlesAfterRefusal is a store on which the open twin of a
// registration settles between the write that met it and the Ledger's
// look for it: the write is refused, and the look finds none. It records
// each registration write's condition.
type twinSettlesAfterRefusal struct {
	*store.Store
	settle  func()
	noTwins *[]bool
}

func (s twinSettlesAfterRefusal) Create(ctx context.Context, ch domain.Change) (domain.Operation, bool, error) {
	*s.noTwins = append(*s.noTwins, ch.NoOpenTwin)
	op, created, err := s.Store.Create(ctx, ch)
	if len(*s.noTwins) == 1 {
		s.settle()
	}
	return op, created, err
}

// TestRegister_twinSettledMeanwhileWrittenUnderTheCondition: a
// registration refused for an open twin that has settled before the
// Ledger looks for it is not held (its twin is no longer open); it is
// written again still held for no open twin, so that it takes its turn
// and a registration of the same content racing it meets it.
func TestRegister_twinSettledMeanwhileWrittenUnderTheCondition(t *testing.T) {
	ctx := context.Background()
	s := storetest.New(t)
	plain := domain.NewLedger(s, testCards())
	content := json.RawMessage(`{"title":"settles meanwhile"}`)
	first, err := plain.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_meanwhile:a", Type: "crm.task.create",
		Content: content, Claim: &domain.Claim{Worker: "w1", Begin: true}})
	if err != nil || first.Claim == nil {
		t.Fatalf("first: %+v %v", first, err)
	}
	var noTwins []bool
	l := domain.NewLedger(twinSettlesAfterRefusal{Store: s, noTwins: &noTwins, settle: func() {
		if _, err := plain.Workflow.Settle(ctx, wf, first.Operation.ID, domain.Settle{LeaseToken: first.Claim.Lease.Token,
			Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "crm_1"}}); err != nil {
			t.Errorf("settling the twin: %v", err)
		}
	}}, testCards())
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_meanwhile:b", Type: "crm.task.create",
		Content: content, Claim: &domain.Claim{Worker: "w1", Begin: true}})
	if err != nil || !res.Created || res.Claim == nil {
		t.Fatalf("second: %+v %v", res, err)
	}
	if !slices.Equal(noTwins, []bool{true, true}) {
		t.Fatalf("the registration's writes were held for no open twin %v, want both", noTwins)
	}
}

// TestRegister_supersedesRacesATwin: a registration that supersedes a
// cancelled operation and plain registrations of its content under other
// keys arrive at once. The supersedes registration looks for a twin like
// any other, in its own write and in its turn: one of them runs, every
// other is held naming it.
func TestRegister_supersedesRacesATwin(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	l := domain.NewLedger(st, testCards())
	for round := range 3 * raceRounds {
		orig, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: fmt.Sprintf("orig-%d", round), Type: "coupon.issue",
			Content: json.RawMessage(fmt.Sprintf(`{"n":%d}`, round))})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Desk.Reject(ctx, approver, orig.Operation.ID, domain.Reject{ContentVersion: 1, Reason: "no"}); err != nil {
			t.Fatal(err)
		}
		content := json.RawMessage(fmt.Sprintf(`{"title":"replacement %d","owner":"u_1"}`, round))
		res := make([]domain.RegisterResult, racers)
		errs := make([]error, racers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range racers {
			r := domain.Registration{Key: fmt.Sprintf("evt_repl%d:%d", round, i), Type: "crm.task.create", Content: content,
				Claim: &domain.Claim{Worker: "w1", Begin: true}}
			if i == 0 {
				r.Supersedes = orig.Operation.ID
			}
			wg.Go(func() {
				<-start
				res[i], errs[i] = l.Workflow.Register(ctx, wf, r)
			})
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil || !res[i].Created {
				t.Fatalf("round %d: register %d: %+v %v", round, i, res[i], err)
			}
		}
		checkOneRuns(t, round, res)
		if got, _, err := st.Load(ctx, "", orig.Operation.ID); err != nil || got.SupersededBy != res[0].Operation.ID {
			t.Fatalf("round %d: the original is superseded by %q, want %s (%v)", round, got.SupersededBy, res[0].Operation.ID, err)
		}
	}
}
