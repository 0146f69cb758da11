package domain

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"
)

// core is what every use case of the ledger shares: the cards, the clock,
// how changes are written and who is told of them. Each use case (Workflow,
// Desk, Outbox, Upkeep, …) embeds it; the ones NewLedger builds share one.
// It loads, decides with the pure transition function and hands the
// change to the store; it never talks HTTP or SQL.
type core struct {
	store coreStorage
	Cards Cards
	IDs   *IDSource
	// Now is the clock for new operations; transitions of existing ones use
	// the database's clock as the store's Load reports it.
	Now    func() time.Time
	Jitter func() float64
	// Observer, if set, is told of every change written.
	Observer ChangeObserver
	// Log, if set, gets one line per written change (core_log.go).
	Log *slog.Logger
}

// coreStorage is what the shared rules read and write: an operation, the
// lease holder's cached copy, and its timeline (what a person's command
// missed since the version they saw).
type coreStorage interface {
	Load(ctx context.Context, namespace, id string) (Operation, time.Time, error)
	Apply(ctx context.Context, ch Change) error
	Leased(id string, token int64) (op Operation, now time.Time, ok bool)
	Timeline(ctx context.Context, operationID string) ([]AuditEvent, error)
}

// newCore is a core over s with the real clock and randomness. A part that
// writes nothing through the shared rules (Incidents, Views, Drills, the
// Outbox) is built alone with a nil s.
func newCore(s coreStorage, cards Cards) *core {
	return &core{store: s, Cards: cards, IDs: &IDSource{}, Now: time.Now, Jitter: rand.Float64}
}

// ChangeObserver is told of each change after it was written: the recovery
// metrics count desk entries, resolutions, attempts and effects from it.
type ChangeObserver interface{ Observe(Change) }

// EventObserver is told of each incoming event recorded for the first time.
type EventObserver interface{ ObserveEvent(Event) }

func (l *core) observe(ctx context.Context, ch Change) {
	if ch.Unchanged {
		return
	}
	if l.Observer != nil {
		l.Observer.Observe(ch)
	}
	l.logChange(ctx, ch)
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
// for that line instead of being logged on its own (core_log.go).
func WithRequestLog(ctx context.Context, requestID, clientAddr string) (context.Context, *RequestLog) {
	rl := &RequestLog{}
	return context.WithValue(ctx, requestInfoKey{}, requestInfo{id: requestID, addr: clientAddr, log: rl}), rl
}

func (l *core) env(ctx context.Context, card Card, actor Actor, now time.Time) Env {
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
func (l *core) mutate(ctx context.Context, actor Actor, id string, cmd Command) (Change, error) {
	if err := checkID(id, "operation"); err != nil {
		return Change{}, err
	}
	if ch, ok, err := l.mutateLeased(ctx, actor, id, cmd); ok || err != nil {
		return ch, err
	}
	for range maxConflictRetries {
		op, now, err := l.store.Load(ctx, scope(actor), id)
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
		if err := l.store.Apply(ctx, ch); ErrorCode(err) == EConflict {
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
func (l *core) mutateLeased(ctx context.Context, actor Actor, id string, cmd Command) (Change, bool, error) {
	var token int64
	switch c := cmd.(type) {
	case Begin:
		token = c.LeaseToken
	case Settle:
		token = c.LeaseToken
	default:
		return Change{}, false, nil
	}
	op, now, ok := l.store.Leased(id, token)
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
	if err := l.store.Apply(ctx, ch); ErrorCode(err) == EConflict {
		return Change{}, false, nil
	} else if err != nil {
		return Change{}, false, err
	}
	l.observe(ctx, ch)
	return ch, true, nil
}

// catchUp applies the system transition that time alone made due, if any.
func (l *core) catchUp(ctx context.Context, op Operation, card Card, now time.Time) (Operation, error) {
	due := Due(op, card, now)
	if due == nil {
		return op, nil
	}
	ch, err := Decide(op, due, l.env(ctx, card, System, now))
	if err != nil {
		return op, err
	}
	if err := l.store.Apply(ctx, ch); ErrorCode(err) == EConflict {
		return op, errConflict
	} else if err != nil {
		return op, err
	}
	l.observe(ctx, ch)
	return ch.Op, nil
}

// get returns the operation the actor may see.
func (l *core) get(ctx context.Context, actor Actor, id string) (Operation, error) {
	if err := checkID(id, "operation"); err != nil {
		return Operation{}, err
	}
	op, _, err := l.store.Load(ctx, scope(actor), id)
	if err == nil {
		l.hideContent(actor, &op)
	}
	return op, err
}

// Sidelines are the timeline events that leave a decision taken before them
// standing: they change neither the state, the content nor its approval.
// An assignment still makes another assignment stale, so that two people
// taking the same item do not both believe it theirs.
func sideline(ev AuditEvent, cmd Command) bool {
	switch ev.Action {
	case "noted", ActionLookupRun:
		return true
	case "assigned":
		_, isAssign := cmd.(Assign)
		return !isAssign
	}
	return false
}

// sinceSeen looks at what happened since the version a person's command was
// taken on. When it was only notes and assignments, the command is taken as
// if the person had seen the current version; otherwise it returns the
// changes, for the conflict to say who changed what.
func (l *core) sinceSeen(ctx context.Context, op Operation, cmd Command) (Command, []AuditEvent, error) {
	sc, ok := cmd.(seenCommand)
	if !ok || sc.seen() == 0 || sc.seen() >= op.Version {
		return cmd, nil, nil
	}
	events, err := l.store.Timeline(ctx, op.ID)
	if err != nil {
		return cmd, nil, err
	}
	var since []AuditEvent
	material := false
	for _, ev := range events {
		if ev.Seq > sc.seen() {
			since = append(since, ev)
			material = material || !sideline(ev, cmd)
		}
	}
	if !material && len(since) > 0 {
		return sc.seeing(op.Version), nil, nil
	}
	return cmd, since, nil
}
