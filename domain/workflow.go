package domain

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"time"
)

// ClaimResult is what the claiming worker gets: the lease with its fencing
// token, the attempt, and the approved snapshot it must execute.
type ClaimResult struct {
	Operation Operation
	Lease     Lease
	Attempt   Attempt
	// ProviderKeyUse says which provider key this attempt sends and why.
	ProviderKeyUse string
}

func claimResult(ch Change) ClaimResult {
	return ClaimResult{Operation: ch.Op, Lease: *ch.Op.Lease, Attempt: ch.Attempt.Attempt, ProviderKeyUse: ch.KeyUse}
}

// RegisterResult is the registered (or replayed) operation, and the claim
// when one was asked for: either Claim or ClaimRefused is set then.
type RegisterResult struct {
	Operation    Operation
	Created      bool
	Claim        *ClaimResult
	ClaimRefused *Error
}

// Register records an operation under its key, or returns the existing one
// when the key is known with the same fingerprint.
func (l *Ledger) Register(ctx context.Context, actor Actor, r Registration) (RegisterResult, error) {
	if err := requireWorkflow(actor); err != nil {
		return RegisterResult{}, err
	}
	r.Namespace = actor.Namespace
	if errs := r.Validate(); len(errs) > 0 {
		return RegisterResult{}, Invalid(errs...)
	}
	card, err := l.Cards.Get(r.Type)
	if err != nil {
		return RegisterResult{}, err
	}
	if errs := l.identifierRules(r, card); len(errs) > 0 {
		return RegisterResult{}, Invalid(errs...)
	}
	content, err := CanonicalObject(r.Content)
	if err != nil {
		return RegisterResult{}, Invalid(contentError("content", err))
	}
	if len(content) > MaxContentBytes {
		return RegisterResult{}, Errorf(ETooLarge, "content is %d bytes; the limit is %d", len(content), MaxContentBytes)
	}
	loop, err := l.loopDetected(ctx, r)
	if err != nil {
		return RegisterResult{}, err
	}
	// A twin is looked for by the write itself (Change.NoOpenTwin), in
	// its turn: a hold decided before the write (a supersedes link's, or
	// none) is only a first answer. A write refused for a twin is decided
	// again: held with the twin named or, when the twin has left its open
	// state since, written again under the same condition, so that a
	// registration racing this one still meets it.
	// An echo of our own effect (the card's echo line) is not run: it is
	// registered failed_terminal with the original named, as a loop is.
	if !loop {
		if r.echo, r.echoOf, err = l.echoOf(ctx, r, card, content); err != nil {
			return RegisterResult{}, err
		}
	}
	refused := loop || r.echo != nil
	twinInWrite := !refused && !card.TwinsAllowed
	if !refused && r.Supersedes != "" {
		if r.held, err = l.hold(ctx, r, card, content); err != nil {
			return RegisterResult{}, err
		}
	}
	env := l.env(ctx, card, actor, l.Now())
	var ch Change
	var op Operation
	var created bool
	for try := 0; ; try++ {
		if try > 0 {
			if r.held, err = l.hold(ctx, r, card, content); err != nil {
				return RegisterResult{}, err
			}
		}
		if ch, err = NewOperation(r, content, loop, env); err != nil {
			return RegisterResult{}, err
		}
		ch.NoOpenTwin = twinInWrite && r.held == nil
		op, created, err = l.create(ctx, r, ch, env)
		if !errors.Is(err, ErrOpenTwin) {
			break
		}
		if try == maxConflictRetries {
			return RegisterResult{}, Errorf(EUnavailable, "operations with the same type and content are changing too fast; try again")
		}
	}
	if err != nil {
		return RegisterResult{}, err
	}
	if !created { // the key is known: a retry, a redelivery or a concurrent twin
		return l.replay(ctx, actor, op, r, content)
	}
	l.observe(ctx, ch)
	res := RegisterResult{Operation: op, Created: true}
	if r.Claim != nil {
		if ch.Attempt != nil {
			c := claimResult(ch)
			res.Claim = &c
		} else {
			res.ClaimRefused = notClaimable(op, ClaimRefusalOf(op, ch.Op.CreatedAt), ch.Op.CreatedAt)
		}
	}
	return res, nil
}

// replay answers a registration of a known key: the same content gets the
// stored operation (and a claim when asked), other content is refused.
func (l *Ledger) replay(ctx context.Context, actor Actor, op Operation, r Registration, content []byte) (RegisterResult, error) {
	if op.Fingerprint != Fingerprint(r.Type, content) {
		e := Errorf(EFingerprint, "key %q was registered with different content or type", r.Key)
		e.Operation = &op
		return RegisterResult{}, e
	}
	res := RegisterResult{Operation: op}
	if r.Claim == nil {
		return res, nil
	}
	c, err := l.Claim(ctx, actor, op.ID, *r.Claim)
	if err != nil {
		e := AsError(err)
		if e.Code != ENotClaimable {
			return RegisterResult{}, err
		}
		res.ClaimRefused = e
		if e.Operation != nil {
			res.Operation = *e.Operation
		}
		return res, nil
	}
	res.Operation, res.Claim = c.Operation, &c
	return res, nil
}

// loopDetected walks the caused_by chain within the namespace.
func (l *Ledger) loopDetected(ctx context.Context, r Registration) (bool, error) {
	var ancestors []string
	for key := r.CausedBy; key != "" && len(ancestors) <= l.MaxCausationDepth; {
		parent, _, err := l.Store.LoadByKey(ctx, r.Namespace, key)
		if ErrorCode(err) == ENotFound {
			break // the cause is not ours to know; the chain ends here
		} else if err != nil {
			return false, err
		}
		if slices.Contains(ancestors, parent.Type) && parent.Key == r.Key {
			break
		}
		ancestors = append(ancestors, parent.Type)
		key = parent.CausedBy
	}
	if r.CausedBy != "" && len(ancestors) == 0 {
		return false, nil
	}
	return LoopDetected(r.Type, ancestors, l.MaxCausationDepth), nil
}

// create writes the new operation. One that supersedes another also links
// the original to it — superseded_by, with an event on the original's
// stream — in the same transaction, deciding again when the original moved
// meanwhile (a concurrent registration superseding it first).
func (l *Ledger) create(ctx context.Context, r Registration, ch Change, env Env) (Operation, bool, error) {
	if r.Supersedes == "" {
		return l.Store.Create(ctx, ch)
	}
	for range maxConflictRetries {
		// A key already registered is a retry of a registration that linked
		// the original the first time: answer it as a replay.
		if existing, _, err := l.Store.LoadByKey(ctx, r.Namespace, r.Key); err == nil {
			return existing, false, nil
		} else if ErrorCode(err) != ENotFound {
			return Operation{}, false, err
		}
		orig, err := l.checkSupersedes(ctx, r)
		if err != nil {
			return Operation{}, false, err
		}
		link, err := supersede(orig, ch.Op, env)
		if err != nil {
			return Operation{}, false, err
		}
		ch.Superseded = &link
		op, created, err := l.Store.Create(ctx, ch)
		if ErrorCode(err) == EConflict && !errors.Is(err, ErrOpenTwin) {
			continue // the original moved: decide the link again
		}
		return op, created, err
	}
	return Operation{}, false, Errorf(EUnavailable, "the superseded operation is changing too fast; try again")
}

// checkSupersedes allows replacing only an operation that was cancelled,
// and only once.
func (l *Ledger) checkSupersedes(ctx context.Context, r Registration) (Operation, error) {
	orig, _, err := l.Store.Load(ctx, r.Namespace, r.Supersedes)
	if err != nil {
		return Operation{}, err
	}
	if orig.State != Cancelled || orig.SupersededBy != "" {
		e := Errorf(EOriginalUnresolved, "operation %s is %s; only a cancelled operation can be superseded once", orig.ID, orig.State)
		e.Operation = &orig
		return Operation{}, e
	}
	return orig, nil
}

// Claim gives the worker the lease on one operation.
func (l *Ledger) Claim(ctx context.Context, actor Actor, id string, c Claim) (ClaimResult, error) {
	if err := requireWorkflow(actor); err != nil {
		return ClaimResult{}, err
	}
	if errs := c.validate(""); len(errs) > 0 {
		return ClaimResult{}, Invalid(errs...)
	}
	ch, err := l.mutate(ctx, actor, id, c)
	if err != nil {
		return ClaimResult{}, err
	}
	return claimResult(ch), nil
}

// PullClaim asks for up to Limit ready operations of the given types.
type PullClaim struct {
	Claim
	Types []string
	Limit int
}

// MaxPullLimit bounds one pull.
const MaxPullLimit = 100

// ClaimNext claims ready operations for a pulling worker; two workers never
// receive the same operation.
func (l *Ledger) ClaimNext(ctx context.Context, actor Actor, p PullClaim) ([]ClaimResult, error) {
	if err := requireWorkflow(actor); err != nil {
		return nil, err
	}
	errs := p.Claim.validate("")
	if p.Limit < 1 || p.Limit > MaxPullLimit {
		errs = append(errs, FieldError{"limit", "must be between 1 and 100"})
	}
	for i, t := range p.Types {
		if _, err := l.Cards.Get(t); err != nil {
			errs = append(errs, FieldError{"types[" + itoa(i) + "]", "no operation type named " + t})
		}
	}
	if len(errs) > 0 {
		return nil, Invalid(errs...)
	}
	changes, err := l.Store.ClaimReady(ctx, ReadyQuery{Namespace: actor.Namespace, Types: p.Types, Limit: p.Limit},
		func(op Operation, now time.Time) (Change, error) {
			card, err := l.Cards.Get(op.Type)
			if err != nil {
				return Change{}, err
			}
			if due := Due(op, card, now); due != nil { // time moved it out of reach
				return Decide(op, due, l.env(ctx, card, System, now))
			}
			return Decide(op, p.Claim, l.env(ctx, card, actor, now))
		})
	if err != nil {
		return nil, err
	}
	out := []ClaimResult{}
	for _, ch := range changes {
		l.observe(ctx, ch)
		if a := ch.Attempt; a != nil && a.New { // a claim, not what time made due
			out = append(out, claimResult(ch))
		}
	}
	return out, nil
}

// Heartbeat extends the caller's lease.
func (l *Ledger) Heartbeat(ctx context.Context, actor Actor, id string, h Heartbeat) (Operation, error) {
	if err := requireWorkflow(actor); err != nil {
		return Operation{}, err
	}
	if errs := validLease("lease_seconds", h.Lease); len(errs) > 0 {
		return Operation{}, Invalid(errs...)
	}
	ch, err := l.mutate(ctx, actor, id, h)
	return ch.Op, err
}

// Begin records that the worker is about to call the provider.
func (l *Ledger) Begin(ctx context.Context, actor Actor, id string, b Begin) (Operation, error) {
	if err := requireWorkflow(actor); err != nil {
		return Operation{}, err
	}
	ch, err := l.mutate(ctx, actor, id, b)
	return ch.Op, err
}

// Settle records the attempt's outcome as the card allows it.
func (l *Ledger) Settle(ctx context.Context, actor Actor, id string, s Settle) (Operation, error) {
	if err := requireWorkflow(actor); err != nil {
		return Operation{}, err
	}
	// The body is judged before the operation's state: a settle that could
	// never be right is 400 whatever state it meets.
	var errs []FieldError
	if s.Outcome == OutcomeCompleted && (s.Result == nil || s.Result.Ref == "") {
		errs = append(errs, FieldError{"result.ref", "is required when the outcome is completed"})
	}
	errs = append(errs, checkResult(s.Result)...)
	if len(errs) > 0 {
		return Operation{}, Invalid(errs...)
	}
	ch, err := l.mutate(ctx, actor, id, relayedSettle(s))
	return ch.Op, err
}

// relayedSettle is the settle as it is judged and kept: its texts and
// result data made valid UTF-8.
func relayedSettle(s Settle) Settle {
	if s.Error != nil {
		e := *s.Error
		e.Code, e.Message = RelayedText(e.Code), RelayedText(e.Message)
		s.Error = &e
	}
	s.Result = relayedResult(s.Result)
	return s
}

// Reconcile records a workflow's lookup at the provider.
func (l *Ledger) Reconcile(ctx context.Context, actor Actor, id string, r Reconcile) (Operation, error) {
	if err := requireWorkflow(actor); err != nil {
		return Operation{}, err
	}
	var errs []FieldError
	if r.Found && (r.Result == nil || r.Result.Ref == "") {
		errs = append(errs, FieldError{"result.ref", "is required when found is true"})
	}
	errs = append(errs, checkResult(r.Result)...)
	if len(errs) > 0 {
		return Operation{}, Invalid(errs...)
	}
	r.Evidence = RelayedText(r.Evidence)
	r.Result = relayedResult(r.Result)
	r.CallBeganAt = nil
	if err := checkID(id, "operation"); err != nil {
		return Operation{}, err
	}
	if !r.Found {
		began, ok, err := l.CallBeganAt(ctx, id, math.MaxInt)
		if err != nil {
			return Operation{}, err
		}
		if ok {
			r.CallBeganAt = &began
		}
	}
	ch, err := l.mutate(ctx, actor, id, r)
	return ch.Op, err
}

// EventRegistration is a workflow's report of an incoming event.
type EventRegistration struct {
	EventID       string
	Source        string
	CorrelationID string
	Actions       []EventAction
}

// EventResult is the event with one operation per action.
type EventResult struct {
	Event      Event
	Created    bool
	Operations []Operation
}

// RegisterEvent records an event and registers one operation per action. A
// redelivery returns the same operations; one with other actions is refused.
func (l *Ledger) RegisterEvent(ctx context.Context, actor Actor, r EventRegistration) (EventResult, error) {
	if err := requireWorkflow(actor); err != nil {
		return EventResult{}, err
	}
	regs, fp, err := l.eventRegistrations(actor, r)
	if err != nil {
		return EventResult{}, err
	}
	ev, created, err := l.Store.SaveEvent(ctx, Event{Namespace: actor.Namespace, EventID: r.EventID, Source: r.Source,
		CorrelationID: r.CorrelationID, Fingerprint: fp, Actions: r.Actions, ReceivedAt: l.Now().UTC()})
	if err != nil {
		return EventResult{}, err
	}
	if ev.Fingerprint != fp {
		return EventResult{}, Errorf(EFingerprint, "event %q was delivered before with different actions", r.EventID)
	}
	if created && l.Events != nil {
		l.Events.ObserveEvent(ev)
	}
	// Each registration is idempotent, so a redelivery after a crash midway
	// registers whatever the first delivery did not.
	res := EventResult{Event: ev, Created: created}
	for _, reg := range regs {
		rr, err := l.Register(ctx, actor, reg)
		if err != nil {
			return EventResult{}, err
		}
		res.Operations = append(res.Operations, rr.Operation)
	}
	return res, nil
}

func (l *Ledger) eventRegistrations(actor Actor, r EventRegistration) ([]Registration, string, error) {
	var errs []FieldError
	if !ValidKey(r.EventID) {
		errs = append(errs, FieldError{"event_id", "must be 1-255 characters from A-Z a-z 0-9 . _ : / @ + = -"})
	}
	if len(r.Actions) == 0 || len(r.Actions) > 50 {
		errs = append(errs, FieldError{"actions", "must list 1-50 actions"})
	}
	var regs []Registration
	var canon []map[string]any
	seen := map[string]bool{}
	for i, a := range r.Actions {
		f := "actions[" + itoa(i) + "]."
		if seen[a.Action] {
			errs = append(errs, FieldError{f + "action", "is listed twice"})
		}
		seen[a.Action] = true
		reg := Registration{Namespace: actor.Namespace, Key: ActionKey(r.EventID, a.Action), Type: a.Type,
			Content: a.Content, EventID: r.EventID, Source: r.Source, CorrelationID: r.CorrelationID}
		for _, fe := range reg.Validate() {
			if fe.Field == "key" {
				fe.Field, fe.Message = "action", "event_id:action must be a valid key of at most 255 characters"
			}
			if fe.Field != "event_id" {
				errs = append(errs, FieldError{f + fe.Field, fe.Message})
			}
		}
		content, err := CanonicalObject(a.Content)
		if err != nil && len(a.Content) > 0 {
			errs = append(errs, contentError(f+"content", err))
		} else if len(content) > MaxContentBytes {
			// Checked before the event is saved, so a refused action never
			// leaves an event recorded without its operations.
			return nil, "", Errorf(ETooLarge, "%scontent is %d bytes; the limit is %d", f, len(content), MaxContentBytes)
		}
		card, err := l.Cards.Get(a.Type)
		if err != nil && a.Type != "" {
			return nil, "", err
		}
		errs = append(errs, eventIdentifierErrors(f, i, l.identifierRules(reg, card))...)
		regs = append(regs, reg)
		canon = append(canon, map[string]any{"action": a.Action, "type": a.Type, "content": json.RawMessage(content)})
	}
	if len(errs) > 0 {
		return nil, "", Invalid(errs...)
	}
	raw, _ := json.Marshal(canon)
	c, err := Canonicalize(raw)
	if err != nil {
		return nil, "", Invalid(FieldError{"actions", err.Error()})
	}
	return regs, "sha256:" + SHA256Hex(c), nil
}

// GetEvent returns the event with each action's current operation.
func (l *Ledger) GetEvent(ctx context.Context, actor Actor, eventID string) (EventResult, error) {
	if err := checkID(eventID, "event"); err != nil {
		return EventResult{}, err
	}
	ev, err := l.Store.GetEvent(ctx, scope(actor), eventID)
	if err != nil {
		return EventResult{}, err
	}
	res := EventResult{Event: ev}
	for i, a := range ev.Actions {
		if card, err := l.Cards.Get(a.Type); err == nil && !card.MayReadContent(actor) {
			res.Event.Actions[i].Content = json.RawMessage("null")
		}
	}
	for _, a := range ev.Actions {
		op, _, err := l.Store.LoadByKey(ctx, ev.Namespace, ActionKey(ev.EventID, a.Action))
		if ErrorCode(err) == ENotFound {
			continue // the delivery that recorded the event did not get this far
		} else if err != nil {
			return EventResult{}, err
		}
		l.hideContent(actor, &op)
		res.Operations = append(res.Operations, op)
	}
	return res, nil
}

// Sweep applies what time alone made due — expired leases, exhausted
// retries, resend guards whose key retention ended, escalations — to up to
// limit operations, and reports how many changed. Safe
// to run on every replica at once: each change is a compare-and-set.
func (l *Ledger) Sweep(ctx context.Context, limit int) (int, error) {
	q := OverdueQuery{Limit: limit, MaxElapsed: map[string]time.Duration{}, Retention: map[string]time.Duration{}}
	for _, c := range l.Cards {
		if c.Retry.MaxElapsed > 0 {
			q.MaxElapsed[c.Name] = c.Retry.MaxElapsed
		}
		if c.DedupesByKey() && c.ProviderKeyRetention > 0 {
			q.Retention[c.Name] = c.ProviderKeyRetention
		}
	}
	ops, now, err := l.Store.Overdue(ctx, q)
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
		m, err := l.Escalate(ctx, limit-n)
		return n + m, err
	}
	return n, nil
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// eventIdentifierErrors names the identifier problems of action i (field
// prefix f) as the event's body has them: the event's own identifiers once,
// at the top; the action's key as its action, unless the event ID alone is
// what makes it personal.
func eventIdentifierErrors(f string, i int, errs []FieldError) []FieldError {
	var out []FieldError
	eventID := slices.ContainsFunc(errs, func(e FieldError) bool { return e.Field == "event_id" })
	for _, fe := range errs {
		switch {
		case fe.Field == "key" && !(eventID && strings.Contains(fe.Message, "personal data")):
			out = append(out, FieldError{f + "action", fe.Message})
		case (fe.Field == "event_id" || fe.Field == "correlation_id") && i == 0:
			out = append(out, fe)
		}
	}
	return out
}
