package reconcile

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// LookupLedger is what the lookup loop needs of the ledger.
type LookupLedger interface {
	LoadForLookup(ctx context.Context, id string) (domain.Operation, domain.Card, time.Time, error)
	ConcludeLookup(ctx context.Context, id string, c domain.ConcludeLookup) (domain.Change, error)
	CallBeganAt(ctx context.Context, id string, attempt int) (time.Time, bool, error)
}

// Looker makes one lookup (lookup.Looker).
type Looker interface {
	Look(ctx context.Context, a domain.LookupAdapter, op domain.Operation) domain.LookupTry
}

// Lookuper looks up, at the provider, each operation that entered
// unknown_outcome on a card with a lookup adapter, before a person is
// asked: at once, then with backoff for the card's window. Each pass
// claims due lookups in a short transaction (SKIP LOCKED on PostgreSQL)
// for a lease, makes the requests with no transaction open, and records
// each try with a compare-and-set on the claim, so on every replica at
// once each try is made once; a crashed reconciler's lookups come back
// when the lease passes. The conclusion is written through the ledger
// (a compare-and-set on the operation): found → completed by the system;
// an authoritative not-found → the card's retry under the same provider
// key, and only once the call's deadline has passed (a not-found before it
// is looked at again then: the call may still land); anything else → the
// desk, with the evidence.
type Lookuper struct {
	Ledger LookupLedger
	Store  domain.LookupStore
	Looker Looker
	Types  []string // the types with an adapter
	// Interval between passes (default 500 ms): how soon after entering
	// unknown_outcome the first lookup is made.
	Interval time.Duration
	// Lease keeps other replicas off a claimed lookup (default 1 min; it
	// must outlast the longest request, at most 1 min).
	Lease time.Duration
	// Backoff is the wait after the first try inside the window, doubled
	// after each (default 5 s).
	Backoff time.Duration
	Batch   int // lookups claimed per pass (default 16)
	Now     func() time.Time
	Log     *slog.Logger
	// Observe, if set, is told of every try (handoff_lookups_total) and of
	// every conclusion written (handoff_settled_total).
	Observe func(opType string, try domain.LookupTry)
	Settled func(opType string, c domain.LookupConclusion)
}

func (l *Lookuper) defaults() {
	if l.Interval <= 0 {
		l.Interval = 500 * time.Millisecond
	}
	if l.Lease <= 0 {
		l.Lease = time.Minute + 10*time.Second
	}
	if l.Backoff <= 0 {
		l.Backoff = 5 * time.Second
	}
	if l.Batch <= 0 {
		l.Batch = 16
	}
	if l.Now == nil {
		l.Now = time.Now
	}
	if l.Log == nil {
		l.Log = slog.Default()
	}
}

// Run looks up until ctx ends.
func (l *Lookuper) Run(ctx context.Context) {
	l.defaults()
	if len(l.Types) == 0 {
		return
	}
	t := time.NewTicker(l.Interval)
	defer t.Stop()
	for {
		if _, err := l.Pass(ctx); err != nil && ctx.Err() == nil {
			l.Log.Warn("lookup pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Pass claims the due lookups, makes them concurrently and waits for them;
// it returns how many it claimed.
func (l *Lookuper) Pass(ctx context.Context) (int, error) {
	l.defaults()
	claims, err := l.Store.ClaimLookups(ctx, l.Types, l.Now(), l.Lease, l.Batch)
	if err != nil {
		return 0, err
	}
	var wg sync.WaitGroup
	for _, c := range claims {
		wg.Go(func() { l.look(ctx, c) })
	}
	wg.Wait()
	return len(claims), nil
}

func (l *Lookuper) look(ctx context.Context, c domain.LookupClaim) {
	log := l.Log.With("operation", c.OperationID, "attempt", c.Attempt)
	op, card, _, err := l.Ledger.LoadForLookup(ctx, c.OperationID)
	if err != nil {
		log.Warn("lookup: loading the operation failed", "err", err)
		return
	}
	if !domain.AwaitingLookup(op, card) || op.Attempts != c.Attempt {
		_ = l.Store.CloseLookup(ctx, c, "superseded")
		return
	}
	began, begun, err := l.Ledger.CallBeganAt(ctx, op.ID, c.Attempt)
	if err != nil {
		log.Warn("lookup: reading the attempt's begin failed", "err", err)
		return // the lease hands the lookup back: no verdict without the call's deadline
	}
	at := l.Now().UTC()
	try := l.Looker.Look(ctx, *card.LookupAdapter, op)
	try.At = at // the loop's clock decides the window; the evidence uses the same
	if ctx.Err() != nil {
		return // shutting down: the lease hands the lookup to another replica
	}
	log.Debug("looked up", "type", op.Type, "request", try.Method+" "+try.URL, "result", try.Summary())
	if l.Observe != nil {
		l.Observe(op.Type, try)
	}
	started := try.At
	if c.StartedAt != nil {
		started = *c.StartedAt
	}
	if !begun {
		began = started // no begin on record: taken to be no earlier than the lookups, never an earlier verdict
	}
	tries := append(append([]domain.LookupTry(nil), c.Tries...), try)
	v := domain.JudgeLookupCall(card, tries, started, began, l.Now(), l.Backoff)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	next := v.Next
	if v.Done {
		next = l.Now().Add(l.Lease) // held until the conclusion is on the operation
	}
	ok, err := l.Store.RecordLookupTry(wctx, c, try, next, "")
	if err != nil || !ok {
		log.Info("lookup: claimed again before its try was recorded", "err", err)
		return
	}
	if !v.Done {
		return
	}
	c.Tries = tries
	_, err = l.Ledger.ConcludeLookup(wctx, op.ID, domain.ConcludeLookup{Attempt: c.Attempt, Conclusion: v.Conclusion, Tries: tries})
	switch {
	case domain.ErrorCode(err) == domain.EInvalidTransition:
		_ = l.Store.CloseLookup(wctx, c, "superseded") // a person or the workflow settled it meanwhile
		return
	case err != nil:
		log.Warn("lookup: writing the conclusion failed", "err", err)
		return
	}
	if l.Settled != nil {
		l.Settled(op.Type, v.Conclusion)
	}
	if err := l.Store.CloseLookup(wctx, c, v.Conclusion.String()); err != nil {
		log.Warn("lookup: closing failed", "err", err)
	}
}
