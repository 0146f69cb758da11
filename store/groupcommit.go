package store

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/trace"

	"github.com/opshandoff/handoff/domain"
)

// Group commit on PostgreSQL. Each write plan (plan.go) is one statement
// (fastpath.go), or shares one with plans like it (multirow.go); the
// committer sends the statements of concurrent changes together, in one
// round trip and one transaction, so one synchronous commit makes many
// calls durable. It batches plans; the renderers write the SQL.
//
//   - One flush is in flight at a time (the lead), and what queues while
//     it runs goes together in the next one: at low load a batch is one
//     change, sent at once, and nothing waits for company; under load the
//     batches grow instead of the flushes multiplying. A second flush
//     starts beside the first only when the first has stalled (stallAfter:
//     a lock wait, a slow disk), up to the writers' number.
//   - A caller that finds no flush in flight flushes its change itself,
//     with whatever has queued, on its own goroutine; only a change that
//     arrives while a flush runs is handed to a writer goroutine to wait
//     for the next. Each hand-over between goroutines is a wake-up, and
//     on cores the server shares with the database a wake-up costs more
//     than the work it hands over.
//   - A batch holds at most groupMax changes.
//   - Every caller is answered after the COMMIT that holds its change, with
//     its own answer: a version that moved is that caller's EConflict only.
//   - A batch that fails as a whole (an error in one statement aborts the
//     transaction) is re-run one change at a time, so one bad change never
//     fails its neighbours.
//   - A connection lost during a flush leaves its outcome unknown: every
//     caller in it gets EUnavailable, nothing is acknowledged, and a retry
//     goes through the version check again.
//
// synchronous_commit and fsync are left as the database has them.

// groupWriters is how many flushes may be in flight at once per process
// at most: one per core. At most, not usually: a flush beyond the first
// starts only when the first has stalled (run below).
func groupWriters() int { return runtime.GOMAXPROCS(0) }

// Option adjusts how Open and Connect set a store up.
type Option func(*options)

type options struct {
	writers int           // flushes in flight at once; 0: groupWriters
	stall   time.Duration // a flush's stall (stallAfter); 0: stallAfter. The tests' to set.
}

// Writers sets how many group-commit flushes one process may have in
// flight at once on PostgreSQL; n < 1 keeps the default, groupWriters.
//
// One flush runs at a time whatever n is (the lead); n - 1 more may run
// beside one that has stalled. So n bounds the connections the group
// commit holds and how many stalled flushes one replica rides out, not
// how many it runs in the ordinary course; with Writers(1) every change
// waits for the flush before it, however long that one waits.
//
// Before the lead every writer flushed as soon as it had a change, so
// with one per core two flushes of one or two changes each ran at once;
// the lead costs the database less CPU per lifecycle and carries more
// lifecycles where the cores are the limit (docs/design/performance-log.md).
func Writers(n int) Option { return func(o *options) { o.writers = n } }

// writerCount is how many flushes the options allow in flight.
func (o options) writerCount() int {
	if o.writers > 0 {
		return o.writers
	}
	return groupWriters()
}

const (
	groupMax = 64 // changes per flush at most
	// flushTimeout bounds one flush; its callers may have gone, it must not
	// hang on their behalf.
	flushTimeout = 30 * time.Second
	// stallAfter is how long the flush in flight may run before a change
	// that waits for it gets a flush of its own beside it. A commit takes
	// a millisecond or a few; one that takes this long waits for a lock (a
	// row a person's decision holds, another replica's turn of the same
	// content) or for a slow disk, and the changes queued behind it need
	// neither.
	stallAfter = 20 * time.Millisecond
)

// stallBound is how long the options let a flush run before another
// starts beside it.
func (o options) stallBound() time.Duration {
	if o.stall > 0 {
		return o.stall
	}
	return stallAfter
}

type commitRequest struct {
	p    *writePlan
	done chan commitResult // buffered: a writer never waits for a caller
	sc   trace.SpanContext // the caller's span, for the flush's (trace.go)
}

type commitResult struct {
	n   int64 // operations written: 0 is a moved version or a taken key
	err error // a domain.Error
}

type committer struct {
	pool *pgxpool.Pool
	reqs chan *commitRequest
	stop chan struct{}
	once sync.Once
	wg   sync.WaitGroup
	// reruns counts flushes that failed as a whole and were re-run change
	// by change: the tests' way to see that a multi-row statement held.
	reruns  atomic.Int64
	writers int           // flushes in flight at once at most: one per writer
	stall   time.Duration // stallAfter, or the tests' bound
	// lead is the one flush that runs without waiting for a stall: a
	// caller or a writer holds it (a token in the channel) while its flush
	// runs, and leadSince is when that flush started (unix ns). spares
	// are the flushes beside a stalled lead: writers - 1 tokens.
	lead      chan struct{}
	leadSince atomic.Int64
	spares    chan struct{}
	// held is how many changes writers hold while they wait for the lead
	// or a spare: with those in reqs, the changes waiting for a flush.
	held atomic.Int64
	// inFlight is how many flushes run now, and mostInFlight the most that
	// ever ran at once: the tests' way to see that writers holds.
	inFlight, mostInFlight atomic.Int64
	// What the flushes did, for GroupCommitStats: how many ran, the
	// changes they held, their summed time (ns), and those a writer ran
	// beside a stalled one.
	flushes, changes, busy, spareFlushes atomic.Int64
}

// GroupCommitStats is what a store's group commit did since it opened.
// Operators read it as rates (/metrics): changes per flush is the batch a
// commit carries, and the busy time's rate is how many flushes were in
// flight on average — near 1 the one flush at a time is what calls wait
// for (the database's statement time and commit), and more replicas add
// latency rather than throughput; spares counting up mean stalled flushes
// (lock waits, a slow disk).
type GroupCommitStats struct {
	Flushes int64         // flushes sent (one re-run change by change counts once)
	Changes int64         // the changes they held
	Busy    time.Duration // their summed time, from sending to the last commit's answer
	Spares  int64         // flushes started beside one that had stalled
	Reruns  int64         // flushes that failed whole and were re-run change by change
}

func (c *committer) stats() GroupCommitStats {
	return GroupCommitStats{Flushes: c.flushes.Load(), Changes: c.changes.Load(),
		Busy: time.Duration(c.busy.Load()), Spares: c.spareFlushes.Load(), Reruns: c.reruns.Load()}
}

func newCommitter(pool *pgxpool.Pool, o options) *committer {
	w := o.writerCount()
	c := &committer{pool: pool, reqs: make(chan *commitRequest, groupMax), stop: make(chan struct{}), writers: w,
		stall: o.stallBound(), lead: make(chan struct{}, 1), spares: make(chan struct{}, w-1)}
	c.wg.Add(w)
	for range w {
		go c.run()
	}
	return c
}

// close stops the writers after their current flush, and waits for a
// caller's flush in flight; a second close does nothing.
func (c *committer) close() {
	c.once.Do(func() {
		close(c.stop)
		c.wg.Wait()
		c.lead <- struct{}{} // held for ever: no caller leads once stopped
	})
}

// write commits the plan and returns how many operations it wrote.
func (c *committer) write(ctx context.Context, p *writePlan) (int64, error) {
	r := &commitRequest{p: p, done: make(chan commitResult, 1), sc: trace.SpanContextFromContext(ctx)}
	select {
	case c.lead <- struct{}{}:
		c.leadSince.Store(time.Now().UnixNano())
		select {
		case <-c.stop:
			<-c.lead
			return 0, domain.Errorf(domain.EUnavailable, "the store is closed")
		default:
		}
		c.flush(c.gather(append(make([]*commitRequest, 0, 4), r)), c.releaseLead)
		res := <-r.done
		return res.n, res.err
	default:
	}
	select {
	case c.reqs <- r:
	case <-ctx.Done():
		return 0, translate(ctx.Err(), "operation") // nothing was sent
	case <-c.stop:
		return 0, domain.Errorf(domain.EUnavailable, "the store is closed")
	}
	select {
	case res := <-r.done:
		return res.n, res.err
	case <-ctx.Done():
		return 0, domain.Errorf(domain.EUnavailable, "the request ended before its write was confirmed; its outcome is unknown")
	case <-c.stop:
		return 0, domain.Errorf(domain.EUnavailable, "the store closed before the write was confirmed; its outcome is unknown")
	}
}

func (c *committer) run() {
	defer c.wg.Done()
	batch := make([]*commitRequest, 0, groupMax)
	stall := time.NewTimer(time.Hour)
	stall.Stop()
	for {
		batch = batch[:0]
		select {
		case r := <-c.reqs:
			batch = append(batch, r)
		case <-c.stop:
			return
		}
		leads, ok := c.takeLead(stall)
		if !ok {
			return // stopped: the change's caller was told its outcome is unknown
		}
		batch = c.gather(batch)
		if !leads {
			c.spareFlushes.Add(1)
		}
		if leads {
			c.flush(batch, c.releaseLead)
		} else {
			c.flush(batch, c.releaseSpare)
		}
	}
}

// gather adds to the batch what has queued, up to groupMax.
func (c *committer) gather(batch []*commitRequest) []*commitRequest {
	for len(batch) < groupMax {
		select {
		case r := <-c.reqs:
			batch = append(batch, r)
		default:
			return batch
		}
	}
	return batch
}

// takeLead waits until this writer may flush, with a change in hand:
// when it holds the lead (true), or when the flush that holds it has run
// for its stall bound and a spare is free (false: this one runs beside
// it, holding the spare). While it waits, what arrives queues for its
// batch. ok is false when the store stopped first.
func (c *committer) takeLead(stall *time.Timer) (leads, ok bool) {
	select {
	case c.lead <- struct{}{}:
		c.leadSince.Store(time.Now().UnixNano())
		return true, true
	default:
	}
	// A writer that waits here is handed the lead the moment its holder
	// lets go (a full channel passes a waiting sender's token in at once),
	// before that holder can take it back for a change of its own.
	c.held.Add(1)
	defer c.held.Add(-1)
	if wait := c.stall - time.Duration(time.Now().UnixNano()-c.leadSince.Load()); wait > 0 {
		stall.Reset(wait)
		defer stall.Stop()
		select {
		case c.lead <- struct{}{}:
			c.leadSince.Store(time.Now().UnixNano())
			return true, true
		case <-stall.C:
		case <-c.stop:
			return false, false
		}
	}
	select {
	case c.lead <- struct{}{}:
		c.leadSince.Store(time.Now().UnixNano())
		return true, true
	case c.spares <- struct{}{}:
		return false, true
	case <-c.stop:
		return false, false
	}
}

// releaseLead gives the lead back. A writer that reads the time before
// the next lead's own sees this one: it waits as long as for a flush just
// started.
func (c *committer) releaseLead() {
	c.leadSince.Store(time.Now().UnixNano())
	<-c.lead
}

// releaseSpare gives a spare back.
func (c *committer) releaseSpare() { <-c.spares }

// flush commits the batch and answers each of its callers. It lets the
// next flush go (pass: the lead's or the spare's token back) as soon as
// the database has answered, before it answers the callers: their
// wake-ups then run beside the next batch's statements instead of
// before them, on cores the server shares with the database. The
// flush's time and its place in flight end there too, so that Close,
// which waits for every token, finds the figures final.
func (c *committer) flush(batch []*commitRequest, pass func()) {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	if span := flushSpan(batch); span != nil {
		defer span.End()
	}
	c.flushes.Add(1)
	c.changes.Add(int64(len(batch)))
	start := time.Now()
	n := c.inFlight.Add(1)
	for m := c.mostInFlight.Load(); n > m; m = c.mostInFlight.Load() {
		if c.mostInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	release := func() {
		c.busy.Add(int64(time.Since(start)))
		c.inFlight.Add(-1)
		pass()
	}
	if len(batch) == 1 {
		res := c.commitOne(ctx, batch[0])
		release()
		batch[0].done <- res
		return
	}
	ns, err := c.commitBatch(ctx, batch, planFlush(batch))
	if err == nil {
		release()
		for i, r := range batch {
			r.done <- commitResult{n: ns[i]}
		}
		return
	}
	if isConnError(err) || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		// The COMMIT may or may not have happened: acknowledge nothing.
		res := commitResult{err: domain.Wrap(domain.EUnavailable, err, "the database connection was lost during the write; its outcome is unknown")}
		release()
		for _, r := range batch {
			r.done <- res
		}
		return
	}
	// The transaction rolled back as a whole: each change on its own.
	c.reruns.Add(1)
	res := make([]commitResult, len(batch))
	for i, r := range batch {
		res[i] = c.commitOne(ctx, r)
	}
	release()
	for i, r := range batch {
		r.done <- res[i]
	}
}

// commitBatch sends the batch's statements (planFlush: one multi-row
// statement per kind, the rest one each) in one round trip, after the one
// that opens every flush (flushOpening: keyedPlans, and the turns of its
// registrations held for no twin, twin.go): the statements
// up to the protocol's Sync are one implicit transaction, which commits at
// the Sync and rolls back whole on any error.
func (c *committer) commitBatch(ctx context.Context, batch []*commitRequest, parts []flushPart) ([]int64, error) {
	plans := make([]*writePlan, len(batch))
	for i, r := range batch {
		plans[i] = r.p
	}
	b := &pgx.Batch{}
	opening, args := flushOpening(plans...)
	b.Queue(opening, args...)
	for _, p := range parts {
		var st *stmt
		if p.multi {
			plans := make([]*writePlan, len(p.idx))
			for j, i := range p.idx {
				plans[j] = batch[i].p
			}
			st = multiStatement(plans)
		} else {
			st = singleStatement(batch[p.idx[0]].p)
		}
		b.Queue(st.query(), st.args...)
	}
	br := c.pool.SendBatch(ctx, b)
	ns := make([]int64, len(batch))
	_, err := br.Exec()
	for _, p := range parts {
		if err != nil {
			break
		}
		err = readPart(br, p, batch, ns)
	}
	// Close reads up to the Sync's answer: the COMMIT.
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return ns, err
}

// readPart reads one statement's answer into ns: a single statement's
// count, or a multi-row statement's written ids, each a 1 for its change.
func readPart(br pgx.BatchResults, p flushPart, batch []*commitRequest, ns []int64) error {
	if !p.multi {
		return br.QueryRow().Scan(&ns[p.idx[0]])
	}
	rows, err := br.Query()
	if err != nil {
		return err
	}
	written := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		written[id] = true
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, i := range p.idx {
		if written[batch[i].p.op.ID] {
			ns[i] = 1
		}
	}
	return nil
}

// commitOne commits one change: its statement after flushOpening's, in one round
// trip and one implicit transaction; it returns the change's answer for
// flush to give once it has passed its turn.
func (c *committer) commitOne(ctx context.Context, r *commitRequest) commitResult {
	st := singleStatement(r.p)
	b := &pgx.Batch{}
	opening, args := flushOpening(r.p)
	b.Queue(opening, args...)
	b.Queue(st.query(), st.args...)
	br := c.pool.SendBatch(ctx, b)
	var n int64
	_, err := br.Exec()
	if err == nil {
		err = br.QueryRow().Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			err = errors.New("the write returned no row")
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return commitResult{n: n, err: translate(err, "operation")}
}
