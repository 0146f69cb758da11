package domain

import (
	"context"
	"errors"
	"slices"
)

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
func (l *Workflow) Register(ctx context.Context, actor Actor, r Registration) (RegisterResult, error) {
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
func (l *Workflow) replay(ctx context.Context, actor Actor, op Operation, r Registration, content []byte) (RegisterResult, error) {
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
func (l *Workflow) loopDetected(ctx context.Context, r Registration) (bool, error) {
	var ancestors []string
	for key := r.CausedBy; key != "" && len(ancestors) <= l.MaxCausationDepth; {
		parent, _, err := l.store.LoadByKey(ctx, r.Namespace, key)
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
func (l *Workflow) create(ctx context.Context, r Registration, ch Change, env Env) (Operation, bool, error) {
	if r.Supersedes == "" {
		return l.store.Create(ctx, ch)
	}
	for range maxConflictRetries {
		// A key already registered is a retry of a registration that linked
		// the original the first time: answer it as a replay.
		if existing, _, err := l.store.LoadByKey(ctx, r.Namespace, r.Key); err == nil {
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
		op, created, err := l.store.Create(ctx, ch)
		if ErrorCode(err) == EConflict && !errors.Is(err, ErrOpenTwin) {
			continue // the original moved: decide the link again
		}
		return op, created, err
	}
	return Operation{}, false, Errorf(EUnavailable, "the superseded operation is changing too fast; try again")
}

// checkSupersedes allows replacing only an operation that was cancelled,
// and only once.
func (l *Workflow) checkSupersedes(ctx context.Context, r Registration) (Operation, error) {
	orig, _, err := l.store.Load(ctx, r.Namespace, r.Supersedes)
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
