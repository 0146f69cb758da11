package domain

import (
	"context"
	"errors"
	"fmt"
)

// A new key is not an escape hatch (invariant 10): the same type and content
// registered under another key while the first one's outcome is open would
// look like a second order to the provider. It waits for a person, who may
// approve it as a deliberate second execution. The same holds for an
// operation that supersedes one that was ever sent.
//
// Open means on its way to the provider or back from it (TwinStates): a
// twin that is still queued, claimed or waiting for a retry will run as
// surely as one in doubt may have. Checking only twins in doubt let two
// registrations of one content both wait for their begin — the three-call
// form, or a queue — and then both execute. An operation awaiting approval
// is not open: it runs only when a person decides, and a person deciding a
// held twin sees its twin beside it.

// TwinStates are the states in which an operation is an open twin of a
// registration of its type and content under another key.
var TwinStates = []State{Received, Processing, ActionPending, UnknownOutcome, FailedRetryable, FailedTerminal}

// The codes of a registration held for a person's approval.
const (
	// CodeTwinUnresolved: the same content under another key is open
	// (TwinStates).
	CodeTwinUnresolved = "twin_unresolved"
	// CodeSupersedesSent: the superseded operation was sent to the
	// provider, so this one may be its second execution.
	CodeSupersedesSent = "supersedes_sent"
)

// ErrOpenTwin is why a store refuses a new operation written on the
// condition that no twin is open (Change.NoOpenTwin) when one is: an
// EConflict wrapping it, which the Ledger answers by deciding the hold
// again rather than as any other conflict of the write.
var ErrOpenTwin = errors.New("an operation with the same type and content is open under another key")

// heldForSecondExecution reports whether op waits for an approval that
// would make it a deliberate second execution.
func heldForSecondExecution(op Operation) bool {
	return op.LastError != nil && (op.LastError.Code == CodeTwinUnresolved || op.LastError.Code == CodeSupersedesSent)
}

// twinFormat is the hold's message: what is the same (Card.sameness), and
// the twin's key, ID and state.
const twinFormat = "same type and %s as %s (%s), which is %s: under a new key the provider would see a second request; approve to run it deliberately a second time"

// hold decides whether a registration must wait for a person before it can
// run: the error it is held with, or nil.
func (l *Workflow) hold(ctx context.Context, r Registration, card Card, content []byte) (*ErrorInfo, error) {
	if !card.TwinsAllowed {
		twin, ok, err := l.store.Twin(ctx, r.Namespace, IdentityHash(r.Type, content, card.Identity), r.Key)
		if err != nil {
			return nil, err
		}
		if ok {
			return &ErrorInfo{Class: ClassConflict, Code: CodeTwinUnresolved,
				Message: fmt.Sprintf(twinFormat, card.sameness(), twin.Key, twin.ID, twin.State)}, nil
		}
	}
	if r.Supersedes != "" && !card.RequiresApproval {
		orig, _, err := l.store.Load(ctx, r.Namespace, r.Supersedes)
		if ErrorCode(err) == ENotFound {
			return nil, nil // refused with the reason when the link is made
		} else if err != nil {
			return nil, err
		}
		if orig.ProviderKeyFirstSentAt != nil {
			return &ErrorInfo{Class: ClassConflict, Code: CodeSupersedesSent,
				Message: fmt.Sprintf("supersedes %s (%s), which was sent to %s under %s: if it acted, this is a second execution; approve to run it deliberately",
					orig.Key, orig.ID, card.Provider, orig.ProviderKey)}, nil
		}
	}
	return nil, nil
}

// heldDetail is a hold as the registration's audit event records it.
func heldDetail(e *ErrorInfo) any {
	if e == nil {
		return nil
	}
	return map[string]any{"code": e.Code, "message": e.Message}
}
