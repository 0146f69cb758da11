package domain

import (
	"context"
	"unicode/utf8"
)

// The human decisions. Each needs a person with the right role, a reason,
// and the version of the operation the person saw.

// MaxReason bounds a reason or a note.
const MaxReason = 2000

func validReason(field, reason string) []FieldError {
	if n := utf8.RuneCountInString(reason); n < 1 || n > MaxReason || !ValidText(reason) {
		return []FieldError{{field, "is required, 1-2000 characters, without NUL"}}
	}
	return nil
}

func (l *Desk) decideAsPerson(ctx context.Context, actor Actor, min Role, id string, cmd Command, errs []FieldError) (Operation, error) {
	if err := requirePerson(actor, min); err != nil {
		return Operation{}, err
	}
	if err := checkID(id, "operation"); err != nil {
		return Operation{}, err
	}
	if len(errs) > 0 {
		return Operation{}, Invalid(errs...)
	}
	ch, err := l.mutate(ctx, actor, id, cmd)
	return ch.Op, err
}

// Resolve records a person's decision on a desk item.
func (l *Desk) Resolve(ctx context.Context, actor Actor, id string, r Resolve) (Operation, error) {
	errs := validReason("reason", r.Reason)
	if r.Action == (ResolveAction{}) {
		errs = append(errs, FieldError{"action", "must be confirm_executed, confirm_not_executed, retry, cancel or resend_same_key"})
	}
	errs = append(errs, checkResult(r.Result)...)
	// What the body needs whatever the state: 400 before any 409.
	switch {
	case r.Action == ResolveConfirmExecuted && (r.Result == nil || r.Result.Ref == ""):
		errs = append(errs, FieldError{"result.ref", "the provider's reference is required to confirm execution"})
	case r.Action == ResolveConfirmNotExecuted && r.Then != ResolveRetry && r.Then != ResolveCancel:
		errs = append(errs, FieldError{"then", "must be retry or cancel"})
	}
	return l.decideAsPerson(ctx, actor, RoleOperator, id, r, errs)
}

// Assign gives a desk item to a person, or takes it back.
func (l *Desk) Assign(ctx context.Context, actor Actor, id string, a Assign) (Operation, error) {
	if a.Reason == "" {
		a.Reason = "assigned"
	}
	errs := validReason("reason", a.Reason)
	if len(errs) == 0 && requirePerson(actor, RoleOperator) == nil {
		var err error
		if a.To, err = assignee(ctx, l.store, actor, a.To); err != nil {
			return Operation{}, err
		}
	}
	return l.decideAsPerson(ctx, actor, RoleOperator, id, a, errs)
}

// AddNote adds a person's remark to the timeline.
func (l *Desk) AddNote(ctx context.Context, actor Actor, id string, n Note) (Operation, error) {
	return l.decideAsPerson(ctx, actor, RoleOperator, id, n, validReason("text", n.Text))
}

// Revise replaces the content with a new snapshot that needs approval.
func (l *Desk) Revise(ctx context.Context, actor Actor, id string, r Revise) (Operation, error) {
	errs := validReason("reason", r.Reason)
	content, err := CanonicalObject(r.Content)
	if err != nil {
		errs = append(errs, contentError("content", err))
	} else if len(content) > MaxContentBytes {
		return Operation{}, Errorf(ETooLarge, "content is %d bytes; the limit is %d", len(content), MaxContentBytes)
	}
	r.Content = content
	return l.decideAsPerson(ctx, actor, RoleOperator, id, r, errs)
}

// Approve signs off a content version; never one's own revision.
func (l *Desk) Approve(ctx context.Context, actor Actor, id string, a Approve) (Operation, error) {
	errs := validReason("reason", a.Reason)
	if a.ContentVersion < 1 {
		errs = append(errs, FieldError{"content_version", "is required"})
	}
	var err error
	if a.reviser, err = l.reviserOf(ctx, actor, id, a.ContentVersion, errs); err != nil {
		return Operation{}, err
	}
	return l.decideAsPerson(ctx, actor, RoleApprover, id, a, errs)
}

// Reject refuses a content version and cancels the operation.
func (l *Desk) Reject(ctx context.Context, actor Actor, id string, r Reject) (Operation, error) {
	errs := validReason("reason", r.Reason)
	if r.ContentVersion < 1 {
		errs = append(errs, FieldError{"content_version", "is required"})
	}
	var err error
	if r.reviser, err = l.reviserOf(ctx, actor, id, r.ContentVersion, errs); err != nil {
		return Operation{}, err
	}
	return l.decideAsPerson(ctx, actor, RoleApprover, id, r, errs)
}

// reviserOf reads who revised content version v of the operation. A
// version's reviser never changes, and the decision checks that v is still
// the current version, so reading it first is safe. Nothing is read for a
// request that will be refused anyway.
func (l *Desk) reviserOf(ctx context.Context, actor Actor, id string, v int, errs []FieldError) (reviser, error) {
	if len(errs) > 0 || requirePerson(actor, RoleApprover) != nil || checkID(id, "operation") != nil {
		return reviser{}, nil
	}
	vs, err := l.store.ContentVersions(ctx, id)
	if err != nil {
		return reviser{}, err
	}
	for _, cv := range vs {
		if cv.Version == v {
			return reviser{issuer: cv.CreatedByIssuer, subject: cv.CreatedBySubject}, nil
		}
	}
	return reviser{}, nil
}
