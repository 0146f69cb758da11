package domain

import (
	"context"
	"time"
)

// Upkeep holds what Handoff's own loops do, on every replica at once: the
// sweeper applying what time alone made due, content retention, the
// reconciler's lookups and Handoff's own retries.
type Upkeep struct {
	*core
	store  UpkeepStorage
	outbox *Outbox // the sweeper escalates what waited too long
}

// UpkeepStorage is the store methods Upkeep calls; their contracts are
// Store's and ContentStore's. The store package implements it.
type UpkeepStorage interface {
	coreStorage
	ContentStore
	Overdue(ctx context.Context, q OverdueQuery) ([]Operation, time.Time, error)
	List(ctx context.Context, q ListQuery) ([]Operation, string, error)
	Attempts(ctx context.Context, operationID string) ([]Attempt, error)
}

// NewUpkeep builds the loops' use cases on s with the real clock, escalating
// through outbox.
func NewUpkeep(s UpkeepStorage, outbox *Outbox) *Upkeep {
	return &Upkeep{core: newCore(s, outbox.Cards), store: s, outbox: outbox}
}

// Sweep applies what time alone made due — expired leases, exhausted
// retries, resend guards whose key retention ended, escalations — to up to
// limit operations, and reports how many changed. Safe
// to run on every replica at once: each change is a compare-and-set.
func (l *Upkeep) Sweep(ctx context.Context, limit int) (int, error) {
	q := OverdueQuery{Limit: limit, MaxElapsed: map[string]time.Duration{}, Retention: map[string]time.Duration{}}
	for _, c := range l.Cards {
		if c.Retry.MaxElapsed > 0 {
			q.MaxElapsed[c.Name] = c.Retry.MaxElapsed
		}
		if c.DedupesByKey() && c.ProviderKeyRetention > 0 {
			q.Retention[c.Name] = c.ProviderKeyRetention
		}
	}
	ops, now, err := l.store.Overdue(ctx, q)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, op := range ops {
		card, err := l.Cards.Get(op.Type)
		if err != nil {
			continue // a type removed from the cards: leave it for a person
		}
		// One change time made due may make another due: a lease that
		// lapses before begin on a resend guard whose retention ended.
		after, err := op, error(nil)
		for range 3 {
			if Due(after, card, now) == nil {
				break
			}
			if after, err = l.catchUp(ctx, after, card, now); err != nil {
				break
			}
		}
		if err == errConflict {
			continue // another replica or a worker got there first
		} else if err != nil {
			return n, err
		}
		if after.Version != op.Version {
			n++
		}
	}
	if n < limit {
		m, err := l.outbox.Escalate(ctx, limit-n)
		return n + m, err
	}
	return n, nil
}

// ConcludeLookup writes a lookup's conclusion as the system.
func (l *Upkeep) ConcludeLookup(ctx context.Context, id string, c ConcludeLookup) (Change, error) {
	return l.mutate(ctx, System, id, c)
}

// LoadForLookup reads an operation and its card for the reconciler's
// lookup, with the database's clock.
func (l *Upkeep) LoadForLookup(ctx context.Context, id string) (Operation, Card, time.Time, error) {
	op, now, err := l.store.Load(ctx, "", id)
	if err != nil {
		return Operation{}, Card{}, time.Time{}, err
	}
	card, err := l.Cards.Get(op.Type)
	return op, card, now, err
}

// CallBeganAt is the operation's last begin up to the given attempt: the
// start of the latest call a lookup of that attempt looks for. ok is false
// when no begin is on record.
func (l *Upkeep) CallBeganAt(ctx context.Context, id string, attempt int) (began time.Time, ok bool, err error) {
	return callBeganAt(ctx, l.store, id, attempt)
}

// attemptReader reads an operation's attempts (Store.Attempts).
type attemptReader interface {
	Attempts(ctx context.Context, operationID string) ([]Attempt, error)
}

func callBeganAt(ctx context.Context, s attemptReader, id string, attempt int) (began time.Time, ok bool, err error) {
	atts, err := s.Attempts(ctx, id)
	if err != nil {
		return time.Time{}, false, err
	}
	for _, a := range atts {
		if a.Number <= attempt && a.BeganAt != nil && (!ok || a.BeganAt.After(began)) {
			began, ok = *a.BeganAt, true
		}
	}
	return began, ok, nil
}

// Retryable pages through the operations of every namespace that q
// selects, for Handoff's own retries (reconcile.Retrier): no actor, as
// the loop is Handoff itself.
func (l *Upkeep) Retryable(ctx context.Context, q ListQuery) ([]Operation, string, error) {
	return l.store.List(ctx, q)
}
