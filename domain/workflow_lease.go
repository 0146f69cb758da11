package domain

import (
	"context"
	"math"
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

// Claim gives the worker the lease on one operation.
func (l *Workflow) Claim(ctx context.Context, actor Actor, id string, c Claim) (ClaimResult, error) {
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
func (l *Workflow) ClaimNext(ctx context.Context, actor Actor, p PullClaim) ([]ClaimResult, error) {
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
	changes, err := l.store.ClaimReady(ctx, ReadyQuery{Namespace: actor.Namespace, Types: p.Types, Limit: p.Limit},
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
func (l *Workflow) Heartbeat(ctx context.Context, actor Actor, id string, h Heartbeat) (Operation, error) {
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
func (l *Workflow) Begin(ctx context.Context, actor Actor, id string, b Begin) (Operation, error) {
	if err := requireWorkflow(actor); err != nil {
		return Operation{}, err
	}
	ch, err := l.mutate(ctx, actor, id, b)
	return ch.Op, err
}

// Settle records the attempt's outcome as the card allows it.
func (l *Workflow) Settle(ctx context.Context, actor Actor, id string, s Settle) (Operation, error) {
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
func (l *Workflow) Reconcile(ctx context.Context, actor Actor, id string, r Reconcile) (Operation, error) {
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
		began, ok, err := callBeganAt(ctx, l.store, id, math.MaxInt)
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
