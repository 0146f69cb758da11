package domain

import (
	"encoding/json"
	"time"
)

// Command is one request to change an operation. Decide is the only place
// that turns a command into a change.
type Command interface{ name() string }

// Env is what a decision may depend on besides the operation and command.
type Env struct {
	Card   Card
	Now    time.Time // the database's clock, read with the operation
	Actor  Actor
	NewID  func(prefix string) string
	Jitter func() float64 // in [0, 1)
	// RequestID and ClientAddr are recorded in the audit events.
	RequestID  string
	ClientAddr string
	// BatchID is added to the events' detail when a batch decided them.
	BatchID string
}

// Change is the outcome of a decision: the operation as it will be, written
// by the store with a compare-and-set on FromVersion (0 for a new one), with
// its audit events, attempt and content rows in the same transaction.
type Change struct {
	Op          Operation
	FromVersion int64
	Events      []AuditEvent
	Attempt     *AttemptChange
	Content     *ContentChange
	// Superseded is, for a new operation that supersedes a cancelled one,
	// the original's change linking it to the new one; the store writes it
	// with the same compare-and-set, in the same transaction.
	Superseded *Change
	// Unchanged is set when the command was a repeat that changes nothing.
	Unchanged bool
	// Notifications are the outbox rows the change makes due, written in
	// the same transaction.
	Notifications []Notification
	// LeftDesk is, for a change that takes the operation off the desk (or
	// out of awaiting approval), when it entered and was taken: what the
	// recovery metrics measure.
	LeftDesk *DeskClock
	// DeskEntry is, for a change that puts the operation on the desk or
	// awaiting approval, why (DeskReason).
	DeskEntry string
	// IncidentEntry and IncidentExit are, for a change that puts an
	// unknown_outcome or failed_terminal item on the desk or takes it off,
	// its incident's part (incident_entry.go), written in the same
	// transaction.
	IncidentEntry *IncidentEntry
	IncidentExit  *IncidentExit
	// LiveLease is set when the change was decided on the store's own
	// record of what it last wrote (LeaseCache) rather than on a load: the
	// write must then also find the lease live by the database's clock
	// (lease_expires_at > clock_timestamp()), or it is refused as EConflict
	// and the Ledger decides again on a real load.
	LiveLease bool
	// KeyUse is, for a claim, which provider key the attempt sends and why
	// (ProviderKeyUse): information for the claimer, nothing to write.
	KeyUse string
	// Before is the operation as the change was decided on (Decide sets
	// it): the store may write only the columns that differ from it. Nil
	// for a new operation, and for a change built another way: every
	// column is written.
	Before *Operation
	// NoOpenTwin is, for a new operation, the condition of its write: no
	// operation of another key in the namespace with its fingerprint is in
	// a state whose outcome is open (invariant 10, twin.go). The store
	// checks it in the write itself and refuses it as EConflict when one
	// is, so a registration pays for the twin lookup only when it has one.
	NoOpenTwin bool
}

// DeskClock is how an operation left the desk: when it entered, when a
// person took it, and the decision.
type DeskClock struct {
	EnteredAt  *time.Time
	AssignedAt *time.Time
	ByPerson   bool
	Decision   string
}

// AttemptChange inserts an attempt (New) or records its begin or end.
type AttemptChange struct {
	New     bool
	Attempt Attempt
}

// ContentChange inserts a content snapshot (New) or records its approval or
// rejection.
type ContentChange struct {
	New     bool
	Version ContentVersion
}

// The worker and system commands.
type (
	// Claim asks for the lease on an operation. With Begin it also records
	// "about to call the provider" in the same change: the worker calls the
	// provider straight after the answer, with no begin call between.
	Claim struct {
		Worker string
		Lease  time.Duration // 0: the card's default
		Begin  bool
	}
	// Heartbeat extends the lease.
	Heartbeat struct {
		LeaseToken int64
		Lease      time.Duration
	}
	// Begin records that the worker is about to call the provider.
	Begin struct{ LeaseToken int64 }
	// Settle reports the attempt's outcome.
	Settle struct {
		LeaseToken int64
		Outcome    Outcome
		Result     *Result
		Error      *ErrorInfo
		RetryAfter time.Duration
	}
	// Reconcile reports a workflow's lookup at the provider.
	Reconcile struct {
		Found    bool
		Result   *Result
		Evidence string
		// CallBeganAt is the operation's last begin, which the Ledger reads
		// from the attempts: a not-found counts only once that call's
		// deadline has passed (Card.NotFoundFrom). nil: none on record.
		CallBeganAt *time.Time
	}
	// ExpireLease is the system's reaction to a lease that ran out.
	ExpireLease struct{}
	// Exhaust ends automatic retries whose time limit passed while waiting.
	Exhaust struct{}
	// LapseResend hands a guarded resend to a person once the provider key
	// has left its retention window.
	LapseResend struct{}
)

func (Claim) name() string       { return "claim" }
func (Heartbeat) name() string   { return "heartbeat" }
func (Begin) name() string       { return "begin" }
func (Settle) name() string      { return "settle" }
func (Reconcile) name() string   { return "reconcile" }
func (ExpireLease) name() string { return "expire_lease" }
func (Exhaust) name() string     { return "exhaust" }
func (LapseResend) name() string { return "lapse_resend" }

// Decide is the state machine: given an operation, a command and the
// environment, it returns the change to write or the reason it is refused.
// It is pure: no I/O, time and randomness come from env.
func Decide(op Operation, cmd Command, env Env) (Change, error) {
	ch, err := decide(op, cmd, env)
	if err == nil && !ch.Unchanged {
		followUp(op, &ch, env)
		stamp(&ch, env)
		seal(&ch)
		ch.Before = &op
	}
	return ch, err
}

// stamp adds the request's context to the change's events.
func stamp(ch *Change, env Env) {
	for i := range ch.Events {
		ch.Events[i].RequestID = env.RequestID
		ch.Events[i].ClientAddr = env.ClientAddr
		if env.BatchID != "" {
			ch.Events[i].Detail = withDetail(ch.Events[i].Detail, "batch_id", env.BatchID)
		}
	}
}

func decide(op Operation, cmd Command, env Env) (Change, error) {
	switch c := cmd.(type) {
	case Claim:
		return decideClaim(op, c, env)
	case Heartbeat:
		return decideHeartbeat(op, c, env)
	case Begin:
		return decideBegin(op, c, env)
	case Settle:
		return decideSettle(op, c, env)
	case Reconcile:
		return decideReconcile(op, c, env)
	case ConcludeLookup:
		return decideConcludeLookup(op, c, env)
	case RecordLookup:
		return decideRecordLookup(op, c, env)
	case ExpireLease:
		return decideExpire(op, env)
	case Exhaust:
		return decideExhaust(op, env)
	case LapseResend:
		return decideLapseResend(op, env)
	case Approve:
		return decideApprove(op, c, env)
	case Reject:
		return decideReject(op, c, env)
	case Resolve:
		return decideResolve(op, c, env)
	case Assign:
		return decideAssign(op, c, env)
	case Note:
		return decideNote(op, c, env)
	case Contradict:
		return decideContradict(op, c, env)
	case Escalate:
		return decideEscalate(op, env)
	case Revise:
		return decideRevise(op, c, env)
	}
	return Change{}, Errorf(EInternal, "unknown command %T", cmd)
}

// Due returns the system command that time alone makes due for op at now —
// an expired lease or exhausted retries — or nil. The Ledger applies it
// before any other command, so every call sees an expiry at once.
func Due(op Operation, card Card, now time.Time) Command {
	switch {
	case op.State.Leased() && op.Lease.Expired(now):
		return ExpireLease{}
	case ResendLapsed(op, card, now):
		return LapseResend{}
	case op.State == FailedRetryable && card.Retry.MaxElapsed > 0 && op.FirstAttemptAt != nil &&
		now.Sub(*op.FirstAttemptAt) >= card.Retry.MaxElapsed:
		return Exhaust{}
	}
	return nil
}

// ClaimRefusalOf says why op cannot be claimed at now, or the zero reason.
func ClaimRefusalOf(op Operation, now time.Time) ClaimRefusal {
	switch op.State {
	case Received:
		return ClaimRefusal{}
	case FailedRetryable:
		if op.NextRetryAt == nil || !now.Before(*op.NextRetryAt) {
			return ClaimRefusal{}
		}
		return RefusedRetryLater
	case Completed:
		return RefusedCompleted
	case Processing, ActionPending:
		return RefusedInProgress
	case AwaitingApproval:
		return RefusedAwaitingApproval
	case Cancelled:
		return RefusedCancelled
	default:
		return RefusedHandedOff
	}
}

func decideClaim(op Operation, c Claim, env Env) (Change, error) {
	ch, d, err := grantClaim(op, c, env)
	if err != nil {
		return Change{}, err
	}
	ch.Events[0].Detail = detail(d)
	if c.Begin {
		return claimAndBegin(ch, env)
	}
	return ch, nil
}

// grantClaim decides a claim without its begin, and returns its event's
// detail as members, not yet rendered: a registration that claims renders
// them with its own (registerAndClaim).
func grantClaim(op Operation, c Claim, env Env) (Change, map[string]any, error) {
	if reason := ClaimRefusalOf(op, env.Now); !reason.IsZero() {
		return Change{}, nil, notClaimable(op, reason, env.Now)
	}
	lease := c.Lease
	if lease == 0 {
		lease = env.Card.Lease
	}
	ch := begin(op, env, Processing, "claimed")
	n := &ch.Op
	n.LeaseToken++
	n.Lease = &Lease{Token: n.LeaseToken, Worker: c.Worker, ExpiresAt: env.Now.Add(lease)}
	n.Attempts++
	if n.FirstAttemptAt == nil {
		n.FirstAttemptAt = ptr(env.Now)
	}
	n.NextRetryAt = nil
	att := Attempt{ID: env.NewID("att"), OperationID: op.ID, Number: n.Attempts, Worker: c.Worker,
		LeaseToken: n.LeaseToken, ClaimedAt: env.Now}
	ch.Attempt = &AttemptChange{New: true, Attempt: att}
	ch.KeyUse = ProviderKeyUse(*n, env.Card)
	return ch, map[string]any{"worker": c.Worker, "attempt": att.Number, "attempt_id": att.ID,
		"lease_expires_at": n.Lease.ExpiresAt, "provider_key": n.ProviderKey, "provider_key_use": ch.KeyUse}, nil
}

// ActionClaimedAndBegan is the event of a claim that began at once
// (Claim.Begin): one event for both facts, the lease and the begin.
const ActionClaimedAndBegan = "claimed_and_began"

// claimAndBegin folds into a granted claim the begin its holder would send
// next, decided by decideBegin on the claimed operation: one change, one
// version, one event (processing is never written), the attempt inserted
// with its began_at already set.
func claimAndBegin(claimed Change, env Env) (Change, error) {
	b, err := decideBegin(claimed.Op, Begin{LeaseToken: claimed.Op.LeaseToken}, env)
	if err != nil {
		return Change{}, err
	}
	ch := claimed
	ch.Op = b.Op
	ch.Op.Version = claimed.Op.Version
	ev := &ch.Events[0]
	ev.Action, ev.ToState = ActionClaimedAndBegan, ch.Op.State.String()
	for k, v := range detailMap(b.Events[0].Detail) {
		ev.Detail = withDetail(ev.Detail, k, v)
	}
	att := *claimed.Attempt
	att.Attempt.BeganAt = b.Attempt.Attempt.BeganAt
	ch.Attempt = &att
	return ch, nil
}

// detailMap is an event's detail as members; nil when there is none.
func detailMap(d json.RawMessage) map[string]any {
	var m map[string]any
	if len(d) > 0 {
		_ = json.Unmarshal(d, &m)
	}
	return m
}

func notClaimable(op Operation, reason ClaimRefusal, now time.Time) *Error {
	e := &Error{Code: ENotClaimable, Reason: reason, Operation: &op,
		Message: "the operation cannot be claimed now: " + reason.String()}
	if reason == RefusedRetryLater && op.NextRetryAt != nil {
		e.RetryAfterSeconds = int(op.NextRetryAt.Sub(now).Seconds()) + 1
	}
	return e
}

// checkLease refuses a command whose fencing token is not the live lease's.
func checkLease(op Operation, token int64, now time.Time) error {
	if !op.State.Leased() || op.Lease == nil || token != op.LeaseToken {
		return Errorf(EStaleLease, "lease %d is not the operation's current lease", token)
	}
	if op.Lease.Expired(now) {
		return Errorf(EStaleLease, "lease %d expired at %s", token, op.Lease.ExpiresAt.Format(time.RFC3339))
	}
	return nil
}

func decideHeartbeat(op Operation, c Heartbeat, env Env) (Change, error) {
	if err := checkLease(op, c.LeaseToken, env.Now); err != nil {
		return Change{}, err
	}
	lease := c.Lease
	if lease == 0 {
		lease = env.Card.Lease
	}
	ch := begin(op, env, op.State, "heartbeat")
	l := *op.Lease
	l.ExpiresAt = env.Now.Add(lease)
	ch.Op.Lease = &l
	ch.Events[0].Detail = detail(map[string]any{"lease_expires_at": l.ExpiresAt})
	return ch, nil
}

func decideBegin(op Operation, c Begin, env Env) (Change, error) {
	if err := checkLease(op, c.LeaseToken, env.Now); err != nil {
		return Change{}, err
	}
	if op.State == ActionPending { // a repeated begin by the same holder
		return Change{Op: op, FromVersion: op.Version, Unchanged: true}, nil
	}
	ch := begin(op, env, ActionPending, "began")
	if ch.Op.ProviderKeyFirstSentAt == nil {
		ch.Op.ProviderKeyFirstSentAt = ptr(env.Now)
		ch.Op.ProviderKeySentVersion = op.ContentVersion // this key now belongs to this content
	}
	ch.Attempt = &AttemptChange{Attempt: Attempt{OperationID: op.ID, Number: op.Attempts, BeganAt: ptr(env.Now)}}
	return ch, nil
}

func decideSettle(op Operation, c Settle, env Env) (Change, error) {
	if err := checkLease(op, c.LeaseToken, env.Now); err != nil {
		return Change{}, err
	}
	if c.Outcome == OutcomeCompleted {
		if op.State != ActionPending {
			return Change{}, Errorf(EInvalidTransition, "an operation can only complete after begin")
		}
		if c.Result == nil || c.Result.Ref == "" {
			return Change{}, Invalid(FieldError{"result.ref", "is required when the outcome is completed"})
		}
		ch := begin(op, env, Completed, "settled")
		ch.Op.Result = c.Result
		ch.Op.LastError = nil
		endLease(&ch, "completed", nil)
		ch.Attempt.Attempt.SettleSHA256 = SettleDigest(c)
		ch.Events[0].Detail = detail(map[string]any{"asked": c.Outcome.String(), "result_ref": c.Result.Ref})
		return ch, nil
	}
	e := ErrorInfo{Class: ClassUnknown}
	if c.Error != nil {
		e = *c.Error
	}
	v := judgeError(env.Card, op, op.State, c.Outcome, e, env.Now)
	if v.code != "" {
		e.Code = v.code
	}
	ch := begin(op, env, v.state, "settled")
	ch.Op.LastError = &e
	if v.state == FailedRetryable {
		applyRetryLimits(&ch, env, c.RetryAfter)
	}
	endLease(&ch, ch.Op.State.String(), &e)
	ch.Attempt.Attempt.SettleSHA256 = SettleDigest(c)
	ch.Events[0].Detail = detail(map[string]any{"asked": c.Outcome.String(), "error": errorDetail(e),
		"next_retry_at": ch.Op.NextRetryAt})
	return ch, nil
}

// applyRetryLimits turns a failed_retryable change into failed_terminal when
// the card's limits are reached, and otherwise schedules the next attempt.
func applyRetryLimits(ch *Change, env Env, retryAfter time.Duration) {
	n := &ch.Op
	if code := env.Card.retryRefused(); code != "" {
		// Another layer (or nobody) retries: Handoff schedules nothing on
		// top, so the failure is final here (invariant 8).
		n.NextRetryAt = nil
		n.State = FailedTerminal
		if n.LastError == nil {
			n.LastError = &ErrorInfo{Class: ClassUnknown}
		}
		n.LastError.Code = code
		ch.Events[len(ch.Events)-1].ToState = FailedTerminal.String()
		return
	}
	if RetriesExhausted(*n, env.Card, env.Now) {
		n.NextRetryAt = nil
		if n.LastError != nil && n.LastError.Code == CodeResendGuarded {
			// The last attempt may have acted: out of retries, that is
			// for a person to find out, not a terminal failure.
			n.State = UnknownOutcome
			ch.Events[len(ch.Events)-1].ToState = UnknownOutcome.String()
			return
		}
		n.State = FailedTerminal
		if n.LastError == nil {
			n.LastError = &ErrorInfo{Class: ClassUnknown}
		}
		n.LastError.Code = "retries_exhausted"
		ch.Events[len(ch.Events)-1].ToState = FailedTerminal.String()
		return
	}
	n.NextRetryAt = ptr(env.Now.Add(Backoff(env.Card, n.Attempts-n.RetryFrom, retryAfter, env.Jitter)))
}

// endLease drops the lease and closes the current attempt.
func endLease(ch *Change, outcome string, e *ErrorInfo) {
	ch.Op.Lease = nil
	ch.Attempt = &AttemptChange{Attempt: Attempt{OperationID: ch.Op.ID, Number: ch.Op.Attempts,
		SettledAt: ptr(ch.Events[0].At), Outcome: outcome, Error: e}}
}

func decideReconcile(op Operation, c Reconcile, env Env) (Change, error) {
	if op.State != UnknownOutcome {
		return Change{}, Errorf(EInvalidTransition, "reconcile is only allowed from unknown_outcome, not %s", op.State)
	}
	switch {
	case c.Found:
		if c.Result == nil || c.Result.Ref == "" {
			return Change{}, Invalid(FieldError{"result.ref", "is required when found is true"})
		}
		ch := begin(op, env, Completed, "reconciled")
		ch.Op.Result = c.Result
		ch.Events[0].Detail = detail(map[string]any{"found": true, "result_ref": c.Result.Ref, "evidence": c.Evidence})
		return ch, nil
	case env.Card.LookupAuthoritative && c.CallBeganAt != nil && env.Now.Before(env.Card.NotFoundFrom(*c.CallBeganAt)):
		// The call may still land: not proof yet (invariant 13).
		ch := begin(op, env, UnknownOutcome, "reconcile_inconclusive")
		ch.Events[0].Detail = detail(map[string]any{"found": false, "authoritative": true, "evidence": c.Evidence,
			"not_before": env.Card.NotFoundFrom(*c.CallBeganAt).UTC()})
		return ch, nil
	case env.Card.LookupAuthoritative:
		ch := begin(op, env, FailedRetryable, "reconciled")
		ch.Op.LastError = &ErrorInfo{Class: ClassNotFound, Code: "not_found_at_provider", Message: c.Evidence}
		if env.Card.retryRefused() != "" { // Handoff does not retry this type: a person re-sends
			ch.Op.State, ch.Events[0].ToState = FailedTerminal, FailedTerminal.String()
		} else {
			applyRetryLimits(&ch, env, 0)
		}
		ch.Events[0].Detail = detail(map[string]any{"found": false, "authoritative": true, "evidence": c.Evidence})
		renewAfterNotFound(&ch, op, env)
		return ch, nil
	default:
		ch := begin(op, env, UnknownOutcome, "reconcile_inconclusive")
		ch.Events[0].Detail = detail(map[string]any{"found": false, "authoritative": false, "evidence": c.Evidence})
		return ch, nil
	}
}

func decideExpire(op Operation, env Env) (Change, error) {
	if !op.State.Leased() || !op.Lease.Expired(env.Now) {
		return Change{}, Errorf(EInvalidTransition, "no expired lease to end")
	}
	if op.State == Processing { // nothing was sent: safe to hand to another worker
		ch := begin(op, env, Received, "lease_expired")
		endLease(&ch, "lease_expired", nil)
		if RetriesExhausted(ch.Op, env.Card, env.Now) { // workers keep dying before begin
			ch.Op.State = FailedTerminal
			ch.Op.LastError = &ErrorInfo{Class: ClassTimeout, Code: "retries_exhausted", Message: "every lease expired before begin"}
			ch.Events[0].ToState = FailedTerminal.String()
		}
		return ch, nil
	}
	// After begin a lost worker means nobody knows: never a silent retry.
	e := ErrorInfo{Class: ClassTimeout, Code: "lease_expired", Message: "the lease expired after begin"}
	ch := begin(op, env, UnknownOutcome, "lease_expired")
	ch.Op.LastError = &e
	endLease(&ch, "lease_expired", &e)
	resendWithinRetention(&ch, env)
	return ch, nil
}

// resendWithinRetention is the system policy on an unknown outcome the
// change just produced: when the provider deduplicates by key and still
// remembers this one, re-sending under the same provider key cannot act
// twice, so the operation is retried instead of handed to a person. It is
// a second event, by the system, after the one that recorded the doubt, so
// the timeline shows both what happened and why nobody was asked. Out of
// retries it stays unknown_outcome: a person decides (resend_same_key is
// theirs while the key is retained), as applyRetryLimits does for a settle.
func resendWithinRetention(ch *Change, env Env) {
	until, _ := env.Card.DedupUntil(ch.Op.ProviderKeyFirstSentAt)
	if ch.Op.State != UnknownOutcome || !env.Card.autoResendSafe(ch.Op, env.Now) || RetriesExhausted(ch.Op, env.Card, env.Now) {
		return
	}
	sys := env
	sys.Actor = System
	next := begin(ch.Op, sys, FailedRetryable, CodeResendGuarded)
	e := *ch.Op.LastError
	e.Code = CodeResendGuarded
	e.Message = "the provider deduplicates by key until " + until.UTC().Format(time.RFC3339) + "; re-sent under the same provider key"
	next.Op.LastError = &e
	applyRetryLimits(&next, env, 0)
	next.Events[0].Detail = detail(map[string]any{"policy": "provider deduplicates by key",
		"dedup_until": until.UTC(), "provider_key": ch.Op.ProviderKey, "next_retry_at": next.Op.NextRetryAt})
	ch.Op = next.Op
	ch.Events = append(ch.Events, next.Events...)
}

func decideLapseResend(op Operation, env Env) (Change, error) {
	if !ResendLapsed(op, env.Card, env.Now) {
		return Change{}, Errorf(EInvalidTransition, "no resend guard has lapsed")
	}
	ch := begin(op, env, UnknownOutcome, "resend_guard_lapsed")
	e := *op.LastError
	e.Code = "retention_expired"
	e.Message = "the provider key left its retention window before the retry; the provider may have acted"
	ch.Op.LastError = &e
	ch.Op.NextRetryAt = nil
	return ch, nil
}

func decideExhaust(op Operation, env Env) (Change, error) {
	if op.State != FailedRetryable || !RetriesExhausted(op, env.Card, env.Now) {
		return Change{}, Errorf(EInvalidTransition, "retries are not exhausted")
	}
	ch := begin(op, env, FailedTerminal, "retries_exhausted")
	e := ErrorInfo{Class: ClassUnknown}
	if op.LastError != nil {
		e = *op.LastError
	}
	e.Code = "retries_exhausted"
	ch.Op.LastError = &e
	ch.Op.NextRetryAt = nil
	return ch, nil
}

// begin starts a change of op to state `to`, with one audit event.
func begin(op Operation, env Env, to State, action string) Change {
	n := op
	n.State = to
	n.Version = op.Version + 1
	n.UpdatedAt = env.Now
	ev := AuditEvent{ID: env.NewID("ev"), Stream: op.ID, Seq: n.Version, OperationID: op.ID,
		Namespace: op.Namespace, At: env.Now, Actor: env.Actor, Action: action,
		FromState: op.State.String(), ToState: to.String()}
	return Change{Op: n, FromVersion: op.Version, Events: []AuditEvent{ev}}
}

func errorDetail(e ErrorInfo) map[string]any {
	return map[string]any{"class": e.Class.String(), "code": e.Code, "message": e.Message}
}

// detail renders an audit event's detail; nil members are dropped.
func detail(m map[string]any) json.RawMessage {
	for k, v := range m {
		if v == nil || v == "" {
			delete(m, k)
		} else if t, ok := v.(*time.Time); ok && t == nil {
			delete(m, k)
		}
	}
	b, _ := json.Marshal(m)
	return b
}

func ptr[T any](v T) *T { return &v }
