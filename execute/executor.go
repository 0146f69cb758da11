package execute

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// Executor runs operations whose card has an execute_adapter as Handoff's
// own worker: the registration claims, the begin is recorded when the
// connection is up, the call is made and its outcome settled, each through
// the ledger's usual workflow methods — so the lease, the fencing token,
// the card's retry rules, the audit and the desk apply as to any worker.
// A replica that dies mid-call leaves its lease to lapse: the operation
// becomes an unknown outcome and is looked up, as for an outside worker.
type Executor struct {
	Workflow *domain.Workflow
	Caller   *Caller
	// Worker is the name the leases are taken under: the replica's.
	Worker string
	Log    *slog.Logger

	wg sync.WaitGroup
}

// Run is what a request started (domain.ExecuteRun).
type Run = domain.ExecuteRun

// Start registers the operation under the key and, when it can be claimed,
// makes the call in the background: the call goes on when the request that
// started it goes away.
func (x *Executor) Start(ctx context.Context, actor domain.Actor, typ string, in domain.ExecuteInput) (Run, error) {
	card, err := x.Workflow.Cards.Get(typ)
	if err != nil {
		return Run{}, err
	}
	if card.ExecuteAdapter == nil {
		return Run{}, domain.Errorf(domain.ENotFound, "operation type %s has no execute_adapter: Handoff cannot make its call", typ)
	}
	res, err := x.Workflow.Register(ctx, actor, domain.Registration{Key: in.Key, Type: typ, Content: in.Content,
		Claim: &domain.Claim{Worker: x.Worker}})
	if err != nil {
		return Run{}, err
	}
	run := Run{Operation: res.Operation, Created: res.Created, Refused: res.ClaimRefused}
	if res.Claim == nil {
		return run, nil
	}
	done := make(chan struct{})
	run.Done, run.Operation = done, res.Claim.Operation
	claim := *res.Claim
	x.wg.Go(func() {
		defer close(done)
		x.run(context.WithoutCancel(ctx), actor, card, claim)
	})
	return run, nil
}

// Resume makes the call of a claimable operation (a retry that is due):
// it claims it as the replica's worker, in the operation's namespace. An
// operation another replica or request got first is left to it.
func (x *Executor) Resume(ctx context.Context, op domain.Operation) error {
	card, err := x.Workflow.Cards.Get(op.Type)
	if err != nil || card.ExecuteAdapter == nil {
		return err
	}
	actor := domain.Actor{Kind: domain.ActorWorkflow, Name: x.Worker, Namespace: op.Namespace}
	c, err := x.Workflow.Claim(ctx, actor, op.ID, domain.Claim{Worker: x.Worker})
	switch domain.ErrorCode(err) {
	case domain.ENotClaimable, domain.EConflict, domain.EStaleLease, domain.EVersionConflict:
		return nil
	}
	if err != nil {
		return err
	}
	x.run(ctx, actor, card, c)
	return nil
}

// Wait waits for the calls in flight (a graceful shutdown).
func (x *Executor) Wait() { x.wg.Wait() }

func (x *Executor) log() *slog.Logger {
	if x.Log != nil {
		return x.Log
	}
	return slog.Default()
}

// run makes the claimed operation's call and settles it. The call is
// bounded by the lease: past it, the lease's expiry decides.
func (x *Executor) run(ctx context.Context, actor domain.Actor, card domain.Card, c domain.ClaimResult) {
	op, token := c.Operation, c.Lease.Token
	ctx, cancel := context.WithDeadline(ctx, c.Lease.ExpiresAt.Add(-time.Second))
	defer cancel()
	log := x.log().With("operation", op.ID, "type", op.Type, "attempt", c.Attempt.Number)
	call := x.Caller.Call(ctx, *card.ExecuteAdapter, op, func() error {
		_, err := x.Workflow.Begin(ctx, actor, op.ID, domain.Begin{LeaseToken: token})
		return err
	})
	if call.Settle.Outcome == (domain.Outcome{}) {
		log.Warn("execute: the begin was not recorded; nothing was sent")
		return
	}
	s := call.Settle
	s.LeaseToken = token
	settled, err := x.Workflow.Settle(ctx, actor, op.ID, s)
	if err != nil {
		// The lease lapses and the system decides: unknown once begun.
		log.Warn("execute: the settle was not recorded", "sent", call.Sent, "err", err)
		return
	}
	log.Debug("executed", "sent", call.Sent, "status", call.Status, "state", settled.State.String(),
		"latency_ms", call.Latency.Milliseconds())
}
