package domain

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// The human commands: every one carries the reason the person gave and the
// operation version they saw, so two people cannot silently overwrite each
// other.
type (
	// Resolve is a person's decision on a desk item.
	Resolve struct {
		Action          ResolveAction
		Then            ResolveAction // after confirm_not_executed: retry or cancel
		Result          *Result       // confirm_executed: the provider's reference
		Reason          string
		ExpectedVersion int64
	}
	// Assign gives the item to a person, or to nobody when To is the zero
	// Person. The Ledger checks To against the people who signed in.
	Assign struct {
		To              Person
		Reason          string
		ExpectedVersion int64
	}
	// Note adds a remark to the timeline.
	Note struct {
		Text            string
		ExpectedVersion int64 // 0: a note never conflicts
	}
	// Revise replaces the content with a new snapshot that needs approval.
	Revise struct {
		Content         json.RawMessage // canonical JSON object
		Reason          string
		ExpectedVersion int64
	}
	// Approve signs off the named content version.
	Approve struct {
		ContentVersion  int
		Reason          string
		ExpectedVersion int64 // 0: not checked
		reviser         reviser
	}
	// Reject refuses the named content version; the operation is cancelled.
	Reject struct {
		ContentVersion  int
		Reason          string
		ExpectedVersion int64
		reviser         reviser
	}
)

// reviser is who revised the content version under decision, as their
// identity provider names them; the Ledger reads it from the version.
type reviser struct{ issuer, subject string }

func (Resolve) name() string { return "resolve" }
func (Assign) name() string  { return "assign" }
func (Note) name() string    { return "note" }
func (Revise) name() string  { return "revise" }
func (Approve) name() string { return "approve" }
func (Reject) name() string  { return "reject" }

// checkSeen refuses a decision taken on a version of the operation that is no
// longer current.
func checkSeen(op Operation, expected int64) error {
	if expected != 0 && expected != op.Version {
		e := Errorf(EVersionConflict, "the operation changed since you loaded it (version %d, now %d)", expected, op.Version)
		e.Operation = &op
		return e
	}
	return nil
}

func decideResolve(op Operation, c Resolve, env Env) (Change, error) {
	if err := checkSeen(op, c.ExpectedVersion); err != nil {
		return Change{}, err
	}
	var to State
	action := c.Action.String()
	switch {
	case c.Action == ResolveConfirmExecuted && op.State == UnknownOutcome:
		if c.Result == nil || c.Result.Ref == "" {
			return Change{}, Invalid(FieldError{"result.ref", "the provider's reference is required to confirm execution"})
		}
		to = Completed
	case c.Action == ResolveConfirmNotExecuted && op.State == UnknownOutcome:
		switch c.Then {
		case ResolveRetry:
			to = Received
		case ResolveCancel:
			to = Cancelled
		default:
			return Change{}, Invalid(FieldError{"then", "must be retry or cancel"})
		}
		action += "+" + c.Then.String()
	case c.Action == ResolveRetry && op.State == FailedTerminal:
		to = Received
	case c.Action == ResolveCancel && op.State == FailedTerminal:
		to = Cancelled
	case c.Action == ResolveResendSameKey && op.State == UnknownOutcome:
		if err := checkResendSafe(op, env); err != nil {
			return Change{}, err
		}
		to = FailedRetryable
	case c.Action == ResolveCancel && op.State == UnknownOutcome:
		return Change{}, Errorf(EInvalidTransition, "confirm whether the provider acted before cancelling an unknown outcome")
	default:
		return Change{}, Errorf(EInvalidTransition, "%s is not allowed from %s", c.Action, op.State)
	}
	if to == Received && op.Approval == nil && (env.Card.RequiresApproval || op.ContentVersion > 1) {
		to = AwaitingApproval // a revised snapshot runs only once approved
	}
	ch := begin(op, env, to, "resolved")
	n := &ch.Op
	n.Resolution = &Resolution{Action: action, By: env.Actor.Identity(), Reason: c.Reason, At: env.Now}
	n.NextRetryAt = nil
	if to == Completed {
		n.Result = c.Result
	}
	if to == Received || to == AwaitingApproval {
		freshBudget(n)
	}
	if c.Action == ResolveResendSameKey {
		resendGuard(n, env)
	}
	renewProviderKey(&ch, env, fmt.Sprintf("a person confirmed that content version %d, sent under the old provider key, did not execute",
		op.ProviderKeySentVersion))
	ch.Events[0].Reason = c.Reason
	d := map[string]any{"action": action}
	if until, ok := env.Card.DedupUntil(op.ProviderKeyFirstSentAt); ok && c.Action == ResolveResendSameKey {
		d["dedup_until"], d["provider_key"] = until.UTC(), op.ProviderKey
	}
	if c.Result != nil {
		d["result_ref"] = c.Result.Ref
	}
	ch.Events[0].Detail = detail(d)
	return ch, nil
}

func decideAssign(op Operation, c Assign, env Env) (Change, error) {
	if err := checkSeen(op, c.ExpectedVersion); err != nil {
		return Change{}, err
	}
	if op.State.Final() {
		return Change{}, Errorf(EInvalidTransition, "a %s operation cannot be assigned", op.State)
	}
	ch := begin(op, env, op.State, "assigned")
	n := &ch.Op
	n.Assignee, n.AssigneeIssuer, n.AssigneeSubject = c.To.Identity(), c.To.Issuer, c.To.Subject
	ch.Events[0].Reason = c.Reason
	// from and to are the display identities; the issuer and subject say
	// which person each was, since an email alone may name two.
	ch.Events[0].Detail = detail(map[string]any{"from": op.Assignee, "from_issuer": op.AssigneeIssuer,
		"from_subject": op.AssigneeSubject, "to": n.Assignee, "to_issuer": n.AssigneeIssuer, "to_subject": n.AssigneeSubject})
	return ch, nil
}

func decideNote(op Operation, c Note, env Env) (Change, error) {
	if err := checkSeen(op, c.ExpectedVersion); err != nil {
		return Change{}, err
	}
	ch := begin(op, env, op.State, "noted")
	ch.Events[0].Reason = c.Text
	return ch, nil
}

// revisable are the states whose content may still change: nothing of it can
// be in flight.
var revisable = []State{Received, FailedRetryable, FailedTerminal, AwaitingApproval}

func decideRevise(op Operation, c Revise, env Env) (Change, error) {
	if err := checkSeen(op, c.ExpectedVersion); err != nil {
		return Change{}, err
	}
	if !slices.Contains(revisable, op.State) {
		return Change{}, Errorf(EInvalidTransition, "content cannot be revised in %s", op.State)
	}
	if err := checkMayReadContent(env); err != nil {
		return Change{}, err
	}
	ch := begin(op, env, AwaitingApproval, "revised")
	n := &ch.Op
	n.ContentVersion++
	n.Content = c.Content
	n.ContentSHA256 = SHA256Hex(c.Content)
	n.ContentAuthor = env.Actor.Identity()
	n.Approval = nil
	n.NextRetryAt = nil
	ch.Content = &ContentChange{New: true, Version: ContentVersion{OperationID: op.ID, Version: n.ContentVersion,
		Content: c.Content, SHA256: n.ContentSHA256, CreatedBy: n.ContentAuthor, CreatedByIssuer: env.Actor.Issuer,
		CreatedBySubject: env.Actor.Subject, CreatedAt: env.Now, Reason: c.Reason}}
	ch.Events[0].Reason = c.Reason
	ch.Events[0].Detail = detail(map[string]any{"content_version": n.ContentVersion, "content_sha256": n.ContentSHA256})
	return ch, nil
}

// checkApprovable enforces what approve and reject share: the current
// snapshot, awaiting approval, and four eyes. The reviser is refused by
// their (issuer, subject), whatever their email says now, and so is anyone
// whose identity — the verified email — is the reviser's: the cautious
// choice when one mailbox signs in as two subjects.
func checkApprovable(op Operation, version int, reviser reviser, env Env) error {
	if op.State != AwaitingApproval {
		return Errorf(EInvalidTransition, "the operation is %s, not awaiting approval", op.State)
	}
	if version != op.ContentVersion {
		e := Errorf(EVersionConflict, "content version %d is not the current one (%d)", version, op.ContentVersion)
		e.Operation = &op
		return e
	}
	if err := checkMayReadContent(env); err != nil {
		return err
	}
	current := ContentVersion{CreatedBy: op.ContentAuthor, CreatedByIssuer: reviser.issuer, CreatedBySubject: reviser.subject}
	if current.RevisedBy(env.Actor) {
		return Errorf(EForbidden, "you revised content version %d; someone else must decide on it", version)
	}
	return nil
}

func decideApprove(op Operation, c Approve, env Env) (Change, error) {
	if err := checkSeen(op, c.ExpectedVersion); err != nil {
		return Change{}, err
	}
	if err := checkApprovable(op, c.ContentVersion, c.reviser, env); err != nil {
		return Change{}, err
	}
	ch := begin(op, env, Received, "approved")
	freshBudget(&ch.Op) // a person changed what runs: its retries start anew
	ch.Op.Approval = &Approval{ContentVersion: c.ContentVersion, By: env.Actor.Identity(), At: env.Now}
	ch.Content = &ContentChange{Version: ContentVersion{OperationID: op.ID, Version: c.ContentVersion,
		ApprovedBy: env.Actor.Identity(), ApprovedAt: ptr(env.Now)}}
	ch.Events[0].Reason = c.Reason
	d := map[string]any{"content_version": c.ContentVersion, "content_sha256": op.ContentSHA256}
	if heldForSecondExecution(op) { // the person chose to run it although it may be a second execution
		d["deliberate_second_execution"] = map[string]any{"code": op.LastError.Code, "message": op.LastError.Message}
	}
	ch.Events[0].Detail = detail(d)
	holdRevision(&ch, op, env)
	renewProviderKey(&ch, env, fmt.Sprintf("content version %d was approved; version %d was sent under the old provider key and did not execute",
		c.ContentVersion, op.ProviderKeySentVersion))
	return ch, nil
}

func decideReject(op Operation, c Reject, env Env) (Change, error) {
	if err := checkSeen(op, c.ExpectedVersion); err != nil {
		return Change{}, err
	}
	if err := checkApprovable(op, c.ContentVersion, c.reviser, env); err != nil {
		return Change{}, err
	}
	ch := begin(op, env, Cancelled, "rejected")
	ch.Op.Resolution = &Resolution{Action: "reject", By: env.Actor.Identity(), Reason: c.Reason, At: env.Now}
	ch.Content = &ContentChange{Version: ContentVersion{OperationID: op.ID, Version: c.ContentVersion,
		RejectedBy: env.Actor.Identity(), RejectedAt: ptr(env.Now)}}
	ch.Events[0].Reason = c.Reason
	ch.Events[0].Detail = detail(map[string]any{"content_version": c.ContentVersion})
	return ch, nil
}

// freshBudget starts the card's retry limits anew after a person decided the
// operation should run again; the old error stays in the attempts and the
// timeline.
func freshBudget(op *Operation) {
	op.RetryFrom = op.Attempts
	op.FirstAttemptAt = nil
	op.LastError = nil
}

// checkResendSafe refuses a person's re-send under the same provider key
// unless the provider deduplicates by key and still remembers this one: the
// only case where a re-send cannot act twice.
func checkResendSafe(op Operation, env Env) error {
	until, ok := env.Card.DedupUntil(op.ProviderKeyFirstSentAt)
	switch {
	case !ok && op.ProviderKeyFirstSentAt == nil:
		return Errorf(EInvalidTransition, "resend_same_key needs a provider key that was sent; this one never was")
	case !ok:
		return Errorf(EInvalidTransition, "resend_same_key is not allowed: %s does not deduplicate by key, so a re-send may act twice", env.Card.Provider)
	case !env.Now.Before(until):
		return Errorf(EInvalidTransition, "resend_same_key is not allowed: the provider key left its retention window at %s", until.UTC().Format(time.RFC3339))
	case keySpent(op, env.Card):
		// The provider remembers the key for the content it was sent with:
		// it would answer the revision with that one's stored result, or
		// refuse it (invariant 9).
		return Errorf(EInvalidTransition, "resend_same_key is not allowed: the provider key was sent with content version %d and the content is now version %d; "+
			"confirm whether version %d executed, and version %d goes out under a new provider key", op.ProviderKeySentVersion, op.ContentVersion,
			op.ProviderKeySentVersion, op.ContentVersion)
	}
	return nil
}

// resendGuard starts a person's re-send: a fresh retry budget, due now, and
// the resend guard, so that if the provider key leaves its retention window
// before the next claim, ResendLapsed hands the item back to a person.
func resendGuard(n *Operation, env Env) {
	until, _ := env.Card.DedupUntil(n.ProviderKeyFirstSentAt)
	e := ErrorInfo{Class: ClassUnknown}
	if n.LastError != nil {
		e = *n.LastError
	}
	freshBudget(n)
	e.Code = CodeResendGuarded
	e.Message = "a person chose to re-send under the same provider key, deduplicated by the provider until " + until.UTC().Format(time.RFC3339)
	n.LastError = &e
	n.NextRetryAt = ptr(env.Now)
}

// seenCommand is a human command that names the operation version the
// person saw.
type seenCommand interface {
	Command
	seen() int64
	// seeing is the command as if the person had seen version v.
	seeing(v int64) Command
}

func (c Resolve) seen() int64            { return c.ExpectedVersion }
func (c Resolve) seeing(v int64) Command { c.ExpectedVersion = v; return c }
func (c Assign) seen() int64             { return c.ExpectedVersion }
func (c Assign) seeing(v int64) Command  { c.ExpectedVersion = v; return c }
func (c Revise) seen() int64             { return c.ExpectedVersion }
func (c Revise) seeing(v int64) Command  { c.ExpectedVersion = v; return c }
func (c Approve) seen() int64            { return c.ExpectedVersion }
func (c Approve) seeing(v int64) Command { c.ExpectedVersion = v; return c }
func (c Reject) seen() int64             { return c.ExpectedVersion }
func (c Reject) seeing(v int64) Command  { c.ExpectedVersion = v; return c }

// checkMayReadContent refuses a decision on content the person may not read
// (the card's content_visible_to): an approval binds to a snapshot, and
// neither it nor a revision may be made unseen.
func checkMayReadContent(env Env) error {
	if env.Card.MayReadContent(env.Actor) {
		return nil
	}
	return Errorf(EForbidden, "this type's content is shown only to %ss and above; a decision on it needs them", env.Card.ContentVisibleTo)
}
