package domain

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Ledger is the service whose methods are Handoff's use cases. It loads,
// decides with the pure transition function and hands the change to the
// Store; it never talks HTTP or SQL.
type Ledger struct {
	Store LedgerStore
	Cards Cards
	IDs   *IDSource
	// Now is the clock for new operations; transitions of existing ones use
	// the database's clock as Store.Load reports it.
	Now               func() time.Time
	Jitter            func() float64
	MaxCausationDepth int
	// Drills reads the stored drill receipts for the Types page; nil when
	// the wiring tracks none.
	Drills DrillReader
	// DrillLog records the receipts drills send (RecordDrill); nil when the
	// wiring keeps none.
	DrillLog DrillWriter
	// Observer, if set, is told of every change the Ledger wrote.
	Observer ChangeObserver
	// Looker makes the desk's "Look up now" lookups; nil: not offered.
	Looker LookupRunner
	// Events, if set, is told of every event received for the first time
	// (a redelivery is not counted again).
	Events EventObserver
	// Log, if set, gets one line per written change (ledger_log.go).
	Log *slog.Logger
	// KeyPII is what a key, event ID or correlation ID holding personal
	// data gets; the zero value refuses.
	KeyPII PIIGuard
}

// ChangeObserver is told of each change after it was written: the recovery
// metrics count desk entries, resolutions, attempts and effects from it.
type ChangeObserver interface{ Observe(Change) }

// EventObserver is told of each incoming event recorded for the first time.
type EventObserver interface{ ObserveEvent(Event) }

func (l *Ledger) observe(ctx context.Context, ch Change) {
	if ch.Unchanged {
		return
	}
	if l.Observer != nil {
		l.Observer.Observe(ch)
	}
	l.logChange(ctx, ch)
}

// NewLedger wires a ledger with the real clock and randomness.
func NewLedger(s LedgerStore, cards Cards) *Ledger {
	return &Ledger{Store: s, Cards: cards, IDs: &IDSource{}, Now: time.Now, Jitter: rand.Float64,
		MaxCausationDepth: MaxCausationDepth}
}

// maxConflictRetries bounds how often a use case reloads and decides again
// after losing a compare-and-set to a concurrent writer.
const maxConflictRetries = 8

type requestInfoKey struct{}

type requestInfo struct {
	id, addr string
	log      *RequestLog // nil: each change is a log line of its own
}

// WithRequestInfo records the request ID and client address that audit
// events written for ctx will carry.
func WithRequestInfo(ctx context.Context, requestID, clientAddr string) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, requestInfo{id: requestID, addr: clientAddr})
}

// WithRequestLog is WithRequestInfo for a caller that writes one log line
// per request: the first change written for ctx is kept in the RequestLog
// for that line instead of being logged on its own (ledger_log.go).
func WithRequestLog(ctx context.Context, requestID, clientAddr string) (context.Context, *RequestLog) {
	rl := &RequestLog{}
	return context.WithValue(ctx, requestInfoKey{}, requestInfo{id: requestID, addr: clientAddr, log: rl}), rl
}

func (l *Ledger) env(ctx context.Context, card Card, actor Actor, now time.Time) Env {
	ri, _ := ctx.Value(requestInfoKey{}).(requestInfo)
	// Microseconds: what PostgreSQL keeps, so hashes over times survive a
	// round trip through the database.
	return Env{Card: card, Now: now.UTC().Truncate(time.Microsecond), Actor: actor, NewID: l.IDs.New, Jitter: l.Jitter,
		RequestID: ri.id, ClientAddr: ri.addr, BatchID: batchOf(ctx)}
}

// scope is the namespace an actor may see: a workflow its own, a person all.
// A person has no namespace and sees every one, except a drill credential,
// which is a person bound to the drill namespace.
func scope(a Actor) string { return a.Namespace }

// requireWorkflow refuses worker-protocol calls from anyone but a workflow.
func requireWorkflow(a Actor) error {
	if a.Kind != ActorWorkflow {
		return Errorf(EForbidden, "only a workflow token may do this")
	}
	return nil
}

// requirePerson refuses human decisions from workflows and people below min.
func requirePerson(a Actor, min Role) error {
	if a.Kind != ActorPerson {
		return Errorf(EForbidden, "only a person may take this decision")
	}
	if !a.Role.AtLeast(min) {
		return Errorf(EForbidden, "this needs the %s role", min)
	}
	return nil
}

// mutate loads the operation, applies whatever time alone made due, decides
// cmd and writes the change, deciding again when a concurrent writer won.
func (l *Ledger) mutate(ctx context.Context, actor Actor, id string, cmd Command) (Change, error) {
	if err := checkID(id, "operation"); err != nil {
		return Change{}, err
	}
	if ch, ok, err := l.mutateLeased(ctx, actor, id, cmd); ok || err != nil {
		return ch, err
	}
	for range maxConflictRetries {
		op, now, err := l.Store.Load(ctx, scope(actor), id)
		if err != nil {
			return Change{}, err
		}
		card, err := l.Cards.Get(op.Type)
		if err != nil {
			return Change{}, err
		}
		op, err = l.catchUp(ctx, op, card, now)
		if errors.Is(err, errConflict) {
			continue
		} else if err != nil {
			return Change{}, err
		}
		cmd, changes, err := l.sinceSeen(ctx, op, cmd)
		if err != nil {
			return Change{}, err
		}
		ch, err := Decide(op, cmd, l.env(ctx, card, actor, now))
		if err != nil || ch.Unchanged {
			return ch, staleWithChanges(err, changes)
		}
		if err := l.Store.Apply(ctx, ch); ErrorCode(err) == EConflict {
			continue
		} else if err != nil {
			return Change{}, err
		}
		l.observe(ctx, ch)
		return ch, nil
	}
	return Change{}, Errorf(EUnavailable, "the operation is changing too fast; try again")
}

var errConflict = errors.New("conflict")

// mutateLeased is mutate's first try for the lease holder's begin and
// settle when the store remembers the operation as it last wrote it: no
// load. Anything unusual — not remembered, another namespace, something
// due by the estimated clock, a refusal or a repeat, a write that finds
// the version moved or the lease dead by the database's clock — is not
// answered here (ok false) but decided again on a real load, so every
// refusal and every expiry is judged on what the database holds.
func (l *Ledger) mutateLeased(ctx context.Context, actor Actor, id string, cmd Command) (Change, bool, error) {
	var token int64
	switch c := cmd.(type) {
	case Begin:
		token = c.LeaseToken
	case Settle:
		token = c.LeaseToken
	default:
		return Change{}, false, nil
	}
	op, now, ok := l.Store.Leased(id, token)
	if !ok {
		return Change{}, false, nil
	}
	if ns := scope(actor); ns != "" && op.Namespace != ns {
		return Change{}, false, nil // as Load: another namespace's operation is not found
	}
	card, err := l.Cards.Get(op.Type)
	if err != nil || Due(op, card, now) != nil {
		return Change{}, false, nil // time made something due: never on this replica's clock
	}
	ch, err := Decide(op, cmd, l.env(ctx, card, actor, now))
	if err != nil || ch.Unchanged {
		return Change{}, false, nil
	}
	ch.LiveLease = true
	if err := l.Store.Apply(ctx, ch); ErrorCode(err) == EConflict {
		return Change{}, false, nil
	} else if err != nil {
		return Change{}, false, err
	}
	l.observe(ctx, ch)
	return ch, true, nil
}

// catchUp applies the system transition that time alone made due, if any.
func (l *Ledger) catchUp(ctx context.Context, op Operation, card Card, now time.Time) (Operation, error) {
	due := Due(op, card, now)
	if due == nil {
		return op, nil
	}
	ch, err := Decide(op, due, l.env(ctx, card, System, now))
	if err != nil {
		return op, err
	}
	if err := l.Store.Apply(ctx, ch); ErrorCode(err) == EConflict {
		return op, errConflict
	} else if err != nil {
		return op, err
	}
	l.observe(ctx, ch)
	return ch.Op, nil
}

// Get returns the operation the actor may see.
func (l *Ledger) Get(ctx context.Context, actor Actor, id string) (Operation, error) {
	if err := checkID(id, "operation"); err != nil {
		return Operation{}, err
	}
	op, _, err := l.Store.Load(ctx, scope(actor), id)
	if err == nil {
		l.hideContent(actor, &op)
	}
	return op, err
}

// List pages through the operations the actor may see.
func (l *Ledger) List(ctx context.Context, actor Actor, q ListQuery, provider string) ([]Operation, string, error) {
	if actor.Namespace != "" { // a workflow, or a person bound to one namespace
		if q.Namespace != "" && q.Namespace != actor.Namespace {
			return nil, "", nil // another namespace: nothing, never a hint that it exists
		}
		q.Namespace = actor.Namespace
	}
	if err := q.check(provider); err != nil {
		return nil, "", err
	}
	if !l.Cards.narrowToProvider(&q, provider) {
		return nil, "", nil // no type of that provider matches: nothing, rather than everything
	}
	l.Cards.hideContentFromSearch(actor, &q)
	return l.Store.List(ctx, q)
}

// Attempts lists every attempt of the operation.
func (l *Ledger) Attempts(ctx context.Context, actor Actor, id string) ([]Attempt, error) {
	if _, err := l.Get(ctx, actor, id); err != nil {
		return nil, err
	}
	as, err := l.Store.Attempts(ctx, id)
	if err != nil || len(as) == 0 {
		return as, err
	}
	events, err := l.Store.Timeline(ctx, id)
	if err != nil {
		return nil, err
	}
	keys := attemptKeys(events)
	for i := range as {
		as[i].ProviderKey = keys[as[i].ID]
	}
	return as, nil
}

// attemptKeys are the provider keys the attempts were given, by attempt
// ID, as each claim's event recorded them: the key is fixed from the claim
// to the settle (a revision's new key is set only outside a lease).
func attemptKeys(events []AuditEvent) map[string]string {
	out := map[string]string{}
	for _, e := range events {
		var d struct {
			AttemptID   string `json:"attempt_id"`
			ProviderKey string `json:"provider_key"`
		}
		if len(e.Detail) == 0 || json.Unmarshal(e.Detail, &d) != nil || d.AttemptID == "" {
			continue
		}
		out[d.AttemptID] = d.ProviderKey
	}
	return out
}

// Timeline lists the operation's audit events in order.
func (l *Ledger) Timeline(ctx context.Context, actor Actor, id string) ([]AuditEvent, error) {
	if _, err := l.Get(ctx, actor, id); err != nil {
		return nil, err
	}
	return l.Store.Timeline(ctx, id)
}

// ContentVersions lists every content snapshot of the operation.
func (l *Ledger) ContentVersions(ctx context.Context, actor Actor, id string) ([]ContentVersion, error) {
	op, err := l.Get(ctx, actor, id)
	if err != nil {
		return nil, err
	}
	vs, err := l.Store.ContentVersions(ctx, id)
	if op.ContentHidden {
		hideVersions(vs)
	}
	return vs, err
}
