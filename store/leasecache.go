package store

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// leaseCache remembers, on PostgreSQL, each leased operation as this
// replica last wrote it, so the lease holder's begin and settle need not
// load it again (domain.LeaseCache). It is only ever a guess: the write
// decided on it still compares the version and checks the lease against
// the database's clock (domain.Change.LiveLease), and a miss there is a
// conflict the Ledger answers with a real load. What must hold is that an
// entry is only ever a state the database committed: it is stored only
// after a write's commit was confirmed, and dropped on any other answer.
type leaseCache struct {
	mu    sync.Mutex
	ops   map[string]domain.Operation
	bytes int // the remembered contents' and results' sizes, roughly
	// offset is the database's clock minus this process's, measured at the
	// last load: events' times are the database's, so a decision taken
	// without a load stamps them with this estimate rather than the local
	// clock, which may be set apart from the database's.
	offset atomic.Int64
	// measured is set by the first load: until then nothing is known of
	// the database's clock, and no decision is taken without a load.
	measured atomic.Bool
	// loads counts the operations read by id: the tests' way to see that a
	// hit skips the read.
	loads atomic.Int64
}

// leaseCacheMax and leaseCacheBytes bound the memory (an operation's
// content alone may be 64 KiB): when either is reached the map is dropped
// whole, which costs a load per operation in flight and nothing else.
const (
	leaseCacheMax   = 8192
	leaseCacheBytes = 32 << 20
)

// cachedSize is roughly what remembering op costs.
func cachedSize(op domain.Operation) int {
	n := 512 + len(op.Content)
	if op.Result != nil {
		n += len(op.Result.Ref) + len(op.Result.Data)
	}
	return n
}

// drop forgets id; the caller holds mu.
func (c *leaseCache) drop(id string) {
	if old, ok := c.ops[id]; ok {
		c.bytes -= cachedSize(old)
		delete(c.ops, id)
	}
}

func newLeaseCache() *leaseCache { return &leaseCache{ops: map[string]domain.Operation{}} }

// clock records the database's clock as a load read it; sent and got are
// the local clock before and after the read, whose midpoint is the best
// guess of when the database read its own.
func (c *leaseCache) clock(db, sent, got time.Time) {
	if c == nil {
		return
	}
	c.loads.Add(1)
	mid := sent.Add(got.Sub(sent) / 2)
	c.offset.Store(int64(db.Sub(mid)))
	c.measured.Store(true)
}

// wrote records the answer to a write of ch: a confirmed write of a leased
// operation is remembered, anything else forgets the operation.
func (c *leaseCache) wrote(ch domain.Change, err error) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if orig := ch.Superseded; orig != nil {
		c.drop(orig.Op.ID)
	}
	c.drop(ch.Op.ID)
	if err != nil || ch.Unchanged || !ch.Op.State.Leased() || ch.Op.Lease == nil {
		return
	}
	n := cachedSize(ch.Op)
	if len(c.ops) >= leaseCacheMax || c.bytes+n > leaseCacheBytes {
		c.ops, c.bytes = map[string]domain.Operation{}, 0
	}
	c.ops[ch.Op.ID] = ch.Op
	c.bytes += n
}

// forget drops the operation, for a write whose outcome is not known.
func (c *leaseCache) forget(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.drop(id)
	c.mu.Unlock()
}

// Leased implements domain.LeaseCache.
func (s *Store) Leased(id string, token int64) (domain.Operation, time.Time, bool) {
	c := s.leases
	if c == nil || !c.measured.Load() {
		return domain.Operation{}, time.Time{}, false
	}
	c.mu.Lock()
	op, ok := c.ops[id]
	c.mu.Unlock()
	if !ok || op.Lease == nil || op.Lease.Token != token || op.LeaseToken != token {
		return domain.Operation{}, time.Time{}, false
	}
	// Its own copies of what a decision might change in place, so that
	// two calls deciding on the same entry never share them.
	l := *op.Lease
	op.Lease = &l
	if op.LastError != nil {
		e := *op.LastError
		op.LastError = &e
	}
	if op.Result != nil {
		r := *op.Result
		op.Result = &r
	}
	return op, time.Now().Add(time.Duration(c.offset.Load())).UTC(), true
}
