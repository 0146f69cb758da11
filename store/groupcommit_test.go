package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

func needPostgres(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("group commit is PostgreSQL's (set " + storetest.EnvPostgres + ")")
	}
}

// newRegistration decides a new, claimed operation as the Ledger would.
func newRegistration(t *testing.T, ids *domain.IDSource, key string) domain.Change {
	t.Helper()
	return newRegistrationOf(t, ids, key, `{"a":1}`)
}

// newRegistrationOf is newRegistration with its content.
func newRegistrationOf(t *testing.T, ids *domain.IDSource, key, content string) domain.Change {
	t.Helper()
	env := domain.Env{Card: testCards()["crm.task.create"], Now: time.Now().UTC().Truncate(time.Microsecond),
		Actor: wf, NewID: ids.New, Jitter: func() float64 { return 0 }}
	ch, err := domain.NewOperation(domain.Registration{Namespace: wf.Namespace, Key: key, Type: "crm.task.create",
		Claim: &domain.Claim{Worker: "w1"}}, []byte(content), false, env)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestGroupCommit_poisonedChange: one change in a flush that the database
// refuses (its audit event's id is taken) fails alone; its neighbours in
// the same flush are committed and answered as created.
func TestGroupCommit_poisonedChange(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	ids := &domain.IDSource{}
	first := newRegistration(t, ids, "evt_0:task")
	if _, created, err := s.Create(ctx, first); err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	var batch []domain.Change
	for i := 1; i <= 6; i++ {
		batch = append(batch, newRegistration(t, ids, fmt.Sprintf("evt_%d:task", i)))
	}
	if !store.FastPath(s, batch[0]) {
		t.Fatal("a registration does not take the single-statement path")
	}
	poisoned := 3
	batch[poisoned].Events[0].ID = first.Events[0].ID

	created, errs := store.CreateTogether(s, batch)
	if n := store.Reruns(s); n != 1 {
		t.Fatalf("the poisoned flush was re-run %d times, want once", n)
	}
	for i, ch := range batch {
		op, _, err := s.LoadByKey(ctx, wf.Namespace, ch.Op.Key)
		if i == poisoned {
			if errs[i] == nil || created[i] {
				t.Fatalf("the poisoned change was acknowledged: %v %v", created[i], errs[i])
			}
			if domain.ErrorCode(err) != domain.ENotFound {
				t.Fatalf("the poisoned change was written: %+v %v", op, err)
			}
			continue
		}
		if errs[i] != nil || !created[i] {
			t.Fatalf("change %d failed beside the poisoned one: %v %v", i, created[i], errs[i])
		}
		if err != nil || op.ID != ch.Op.ID || op.State != domain.Processing {
			t.Fatalf("change %d not committed: %+v %v", i, op, err)
		}
		if tl, _ := s.Timeline(ctx, op.ID); len(tl) != len(ch.Events) {
			t.Fatalf("change %d: %d audit events, want %d", i, len(tl), len(ch.Events))
		}
	}
	// A flush of good changes commits them all, each answered created, and
	// a taken key answered as not created.
	again := []domain.Change{newRegistration(t, ids, "evt_7:task"), newRegistration(t, ids, "evt_1:task"), newRegistration(t, ids, "evt_8:task")}
	created, errs = store.CreateTogether(s, again)
	if !created[0] || created[1] || !created[2] || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("created %v, errs %v", created, errs)
	}
}

// namedURL is a fresh test database's URL whose connections carry an
// application name of their own (prefix and a number), so that the test
// finds them in pg_stat_activity among other packages' connections.
func namedURL(t *testing.T, prefix string) (string, string) {
	t.Helper()
	u, err := url.Parse(storetest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	app := fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano())
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	return u.String(), app
}

// TestGroupCommit_connectionKilled: while workers run lifecycles through
// the Ledger, the store's connections are killed again and again
// (pg_terminate_backend), flushes included. Every call that was
// acknowledged is in the database afterwards, and every operation's audit
// chain is whole and ends at the operation's head.
func TestGroupCommit_connectionKilled(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	u, app := namedURL(t, "handoff_gc_kill")
	s, err := store.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := domain.NewLedger(s, testCards())

	admin, err := sql.Open("pgx", os.Getenv(storetest.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()

	const workers, perWorker = 32, 8 // more workers than writers: flushes of several changes
	type acked struct {
		id    string
		stage int // 1 registered and claimed, 2 begun, 3 settled
	}
	var (
		mu     sync.Mutex
		acks   = map[string]acked{}
		killed int
	)
	stop := make(chan struct{})
	killerDone := make(chan struct{})
	// The killer strikes only once something was acknowledged since its
	// last strike: on a slow, loaded machine a fixed 15 ms rhythm can kill
	// every flush before it commits, and then the test tests nothing.
	var progress atomic.Int64
	go func() {
		defer close(killerDone)
		var seen int64
		for {
			select {
			case <-stop:
				return
			case <-time.After(15 * time.Millisecond):
			}
			if p := progress.Load(); p == seen {
				continue
			} else {
				seen = p
			}
			var n int
			_ = admin.QueryRow("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1 AND state = 'active'", app).Scan(&n)
			killed += n
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				key := fmt.Sprintf("evt_%d_%d:task", w, i)
				res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
					Content: json.RawMessage(`{"a":"` + key + `"}`), Claim: &domain.Claim{Worker: "w1"}})
				if err != nil || res.Claim == nil {
					continue // unknown or refused: nothing acknowledged
				}
				id, token := res.Operation.ID, res.Claim.Lease.Token
				mu.Lock()
				acks[key] = acked{id, 1}
				mu.Unlock()
				progress.Add(1)
				if _, err := l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: token}); err != nil {
					continue
				}
				mu.Lock()
				acks[key] = acked{id, 2}
				mu.Unlock()
				progress.Add(1)
				if _, err := l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: token, Outcome: domain.OutcomeCompleted,
					Result: &domain.Result{Ref: "crm_" + key}}); err != nil {
					continue
				}
				mu.Lock()
				acks[key] = acked{id, 3}
				mu.Unlock()
				progress.Add(1)
			}
		})
	}
	wg.Wait()
	close(stop)
	<-killerDone
	t.Logf("%d acknowledged operations, %d backends killed", len(acks), killed)
	if len(acks) == 0 {
		t.Fatal("nothing was acknowledged: the test tested nothing")
	}

	// A connection killed just as it went idle is still in the pool, and
	// fails once when next used: use them all up, reading at once on more
	// connections than the pool holds, before reading back.
	for range 3 {
		var drain sync.WaitGroup
		for range 64 {
			drain.Go(func() { _, _, _ = s.Load(ctx, "", "op_missing") })
		}
		drain.Wait()
	}
	for key, a := range acks {
		op, _, err := s.Load(ctx, "", a.id)
		if err != nil {
			t.Fatalf("%s: acknowledged registration lost: %v", key, err)
		}
		atts, err := s.Attempts(ctx, a.id)
		if err != nil || len(atts) == 0 {
			t.Fatalf("%s: acknowledged claim lost: %v", key, err)
		}
		if a.stage >= 2 && atts[0].BeganAt == nil {
			t.Fatalf("%s: acknowledged begin lost: %+v", key, atts[0])
		}
		if a.stage == 3 && (op.State != domain.Completed || atts[0].Outcome != "completed") {
			t.Fatalf("%s: acknowledged settle lost: %s %+v", key, op.State, atts[0])
		}
		tl, err := s.Timeline(ctx, a.id)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range tl {
			if e.Seq != int64(i+1) || e.Hash != domain.HashEvent(e) || (i > 0 && e.PrevHash != tl[i-1].Hash) {
				t.Fatalf("%s: event %d breaks the chain: %+v", key, i, e)
			}
		}
		if len(tl) == 0 || op.AuditHead != tl[len(tl)-1].Hash {
			t.Fatalf("%s: the operation's head is not its chain's last hash", key)
		}
	}
	if _, _, err := s.Load(ctx, "", "op_missing"); domain.ErrorCode(err) != domain.ENotFound {
		t.Fatalf("the store does not answer after the faults: %v", err)
	}
}

// TestGroupCommit_writers: store.Writers sets how many flushes a process
// may have in flight at once — one per core without it — and one writer
// still commits every one of many concurrent changes, taking together what
// queued while its flush ran.
func TestGroupCommit_writers(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	for _, tc := range []struct {
		opts []store.Option
		want int
	}{
		{nil, runtime.GOMAXPROCS(0)},
		{[]store.Option{store.Writers(0)}, runtime.GOMAXPROCS(0)},
		{[]store.Option{store.Writers(3)}, 3},
		{[]store.Option{store.Writers(1)}, 1},
	} {
		s, err := store.Open(ctx, storetest.URL(t), tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if w, _ := store.FlushWriters(s); w != tc.want {
			t.Fatalf("%d writers, want %d", w, tc.want)
		}
		if tc.want != 1 {
			continue
		}
		chs := createAtOnce(t, s, 48)
		if _, most := store.FlushWriters(s); most != 1 {
			t.Fatalf("%d flushes ran at once with one writer", most)
		}
		for _, ch := range chs {
			if _, _, err := s.LoadByKey(ctx, wf.Namespace, ch.Op.Key); err != nil {
				t.Fatalf("%s not committed: %v", ch.Op.Key, err)
			}
		}
	}
}

// createAtOnce registers n new operations from n goroutines let go at
// once, and fails the test unless each was created.
func createAtOnce(t *testing.T, s *store.Store, n int) []domain.Change {
	t.Helper()
	ids := &domain.IDSource{}
	chs := make([]domain.Change, n)
	for i := range chs {
		chs[i] = newRegistration(t, ids, fmt.Sprintf("evt_%d:task", i))
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, ch := range chs {
		wg.Go(func() {
			<-start
			if _, created, err := s.Create(context.Background(), ch); err != nil || !created {
				errs[i] = fmt.Errorf("created %v: %v", created, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
	}
	return chs
}

// TestGroupCommit_oneFlushInFlight: with writers to spare, many concurrent
// changes still go out one flush at a time — what queues while a flush
// runs goes together in the next — as long as no flush stalls.
func TestGroupCommit_oneFlushInFlight(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s, err := store.Open(ctx, storetest.URL(t), store.Writers(4), store.StallAfter(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	createAtOnce(t, s, 48)
	if _, most := store.FlushWriters(s); most != 1 {
		t.Fatalf("%d flushes ran at once, want 1 while none stalls", most)
	}
	// The figures /metrics shows: every change counted once, in fewer
	// flushes than changes (they went together), none of them a spare.
	// Read after Close, which waits for every flush to pass its turn, and
	// a flush's time is counted before it does.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st, ok := s.GroupCommit()
	if !ok || st.Changes != 48 || st.Flushes < 1 || st.Flushes >= 48 || st.Spares != 0 || st.Reruns != 0 || st.Busy <= 0 {
		t.Fatalf("group commit stats %+v (ok %v), want 48 changes in fewer flushes, no spare, time spent", st, ok)
	}
}

// TestGroupCommit_statsOnSQLite: SQLite writes without a group commit, and
// says so rather than report zeros as if one ran.
func TestGroupCommit_statsOnSQLite(t *testing.T) {
	s, err := store.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if st, ok := s.GroupCommit(); ok || st != (store.GroupCommitStats{}) {
		t.Fatalf("SQLite reported a group commit: %+v", st)
	}
}

// TestGroupCommit_stalledFlush: a flush that waits for a lock (here a row
// another transaction holds) holds up the changes queued behind it no
// longer than the stall bound: another writer then flushes them beside
// it. With one writer, or a bound longer than the wait, they wait for it.
func TestGroupCommit_stalledFlush(t *testing.T) {
	needPostgres(t)
	for _, tc := range []struct {
		name      string
		opts      []store.Option
		overtakes bool // the second change commits while the first waits
	}{
		{"default", nil, true},
		{"one_writer", []store.Option{store.Writers(1)}, false},
		{"no_stall_yet", []store.Option{store.Writers(2), store.StallAfter(time.Hour)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			u, app := namedURL(t, "handoff_gc_stall")
			s, err := store.Open(ctx, u, append([]store.Option{store.Writers(2)}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			l := domain.NewLedger(s, testCards())
			res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_1:task", Type: "crm.task.create",
				Content: json.RawMessage(`{"a":1}`), Claim: &domain.Claim{Worker: "w1"}})
			if err != nil {
				t.Fatal(err)
			}
			// Another transaction holds the operation's row: the begin's
			// flush waits for it.
			holder, err := sql.Open("pgx", u)
			if err != nil {
				t.Fatal(err)
			}
			defer holder.Close()
			tx, err := holder.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.Exec("SELECT 1 FROM operations WHERE id = $1 FOR UPDATE", res.Operation.ID); err != nil {
				t.Fatal(err)
			}
			begun := make(chan error, 1)
			go func() {
				_, err := l.Workflow.Begin(ctx, wf, res.Operation.ID, domain.Begin{LeaseToken: res.Claim.Lease.Token})
				begun <- err
			}()
			waiting := func() bool {
				var n int
				_ = holder.QueryRow("SELECT count(*) FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'", app).Scan(&n)
				return n > 0
			}
			for deadline := time.Now().Add(10 * time.Second); !waiting(); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the begin's flush never waited for the row")
				}
			}
			registered := make(chan error, 1)
			go func() {
				_, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: "evt_2:task", Type: "crm.task.create",
					Content: json.RawMessage(`{"a":2}`), Claim: &domain.Claim{Worker: "w1"}})
				registered <- err
			}()
			wait := 500 * time.Millisecond
			if tc.overtakes {
				wait = 10 * time.Second
			}
			select {
			case err := <-registered:
				if !tc.overtakes {
					t.Fatalf("the registration committed while the flush before it waited (%v)", err)
				}
				if err != nil {
					t.Fatalf("the registration beside the stalled flush: %v", err)
				}
				select {
				case err := <-begun:
					t.Fatalf("the begin ended while its row was held: %v", err)
				default:
				}
			case <-time.After(wait):
				if tc.overtakes {
					t.Fatalf("the registration waited %s behind a stalled flush", wait)
				}
			}
			if err := tx.Rollback(); err != nil {
				t.Fatal(err)
			}
			if err := <-begun; err != nil {
				t.Fatalf("the begin after the row was let go: %v", err)
			}
			if !tc.overtakes {
				if err := <-registered; err != nil {
					t.Fatalf("the registration after the stalled flush: %v", err)
				}
			}
			if _, most := store.FlushWriters(s); tc.overtakes != (most == 2) {
				t.Fatalf("%d flushes at once at most", most)
			}
			// What operators see: a spare flush only where one overtook
			// (read after Close, which waits for every flush to end).
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if st, _ := s.GroupCommit(); tc.overtakes != (st.Spares == 1) || st.Changes != 3 {
				t.Fatalf("group commit stats %+v, want 3 changes and a spare flush only where one overtook", st)
			}
		})
	}
}

// TestGroupCommit_turnPassedBeforeAnswers: a flush lets the next one go
// as soon as the database has answered, before it answers its callers —
// once, whether it held one change, several, or several re-run one by
// one — so that the next batch is on its way while this one's callers
// wake (docs/design/performance-log.md: the gap between flushes).
func TestGroupCommit_turnPassedBeforeAnswers(t *testing.T) {
	needPostgres(t)
	ctx := context.Background()
	s := storetest.New(t)
	ids := &domain.IDSource{}
	first := newRegistration(t, ids, "turn_0:task")
	if _, created, err := s.Create(ctx, first); err != nil || !created {
		t.Fatalf("create: %v %v", created, err)
	}
	poisoned := []domain.Change{newRegistration(t, ids, "turn_p1:task"), newRegistration(t, ids, "turn_p2:task")}
	poisoned[1].Events[0].ID = first.Events[0].ID
	for _, tc := range []struct {
		name    string
		chs     []domain.Change
		failing int
	}{
		{"one change", []domain.Change{newRegistration(t, ids, "turn_1:task")}, 0},
		{"several", []domain.Change{newRegistration(t, ids, "turn_2:task"), newRegistration(t, ids, "turn_3:task")}, 0},
		{"re-run one by one", poisoned, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answered, releases, errs := store.CreateTogetherObserved(s, tc.chs)
			if releases != 1 || answered != 0 {
				t.Fatalf("the turn was passed %d times, with %d callers answered before; want once, before any", releases, answered)
			}
			failed := 0
			for _, err := range errs {
				if err != nil {
					failed++
				}
			}
			if failed != tc.failing {
				t.Fatalf("%d changes failed, want %d: %v", failed, tc.failing, errs)
			}
		})
	}
}
