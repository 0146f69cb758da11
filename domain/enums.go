package domain

import "fmt"

// The closed sets of the domain are structs with an unexported field: outside
// this package the only values are the ones declared here (or the zero value,
// which is never valid), and Parse* functions are the only way in from text.

// State is where an operation is in its lifecycle.
type State struct{ s string }

// The states of PRODUCT.md's state machine.
var (
	AwaitingApproval = State{"awaiting_approval"}
	Received         = State{"received"}
	Processing       = State{"processing"}
	ActionPending    = State{"action_pending"}
	Completed        = State{"completed"}
	FailedRetryable  = State{"failed_retryable"}
	FailedTerminal   = State{"failed_terminal"}
	UnknownOutcome   = State{"unknown_outcome"}
	Cancelled        = State{"cancelled"}
)

// States lists every state, in lifecycle order.
var States = []State{AwaitingApproval, Received, Processing, ActionPending, Completed,
	FailedRetryable, FailedTerminal, UnknownOutcome, Cancelled}

func (s State) String() string { return s.s }

// IsZero reports whether s is the zero State (no state).
func (s State) IsZero() bool { return s.s == "" }

// Final reports whether nothing can ever happen to the operation again.
func (s State) Final() bool { return s == Completed || s == Cancelled }

// InDesk reports whether the state is one that only a person can resolve.
func (s State) InDesk() bool { return s == UnknownOutcome || s == FailedTerminal }

// Leased reports whether the state is held under a worker's lease.
func (s State) Leased() bool { return s == Processing || s == ActionPending }

// ParseState reads a state name.
func ParseState(v string) (State, error) { return parse(v, States, "state") }

// ErrorClass classifies a provider or worker error; the retry card says which
// classes are retryable and which are terminal.
type ErrorClass struct{ s string }

// The error classes of API.md.
var (
	ClassTransient   = ErrorClass{"transient"}
	ClassRateLimited = ErrorClass{"rate_limited"}
	ClassTimeout     = ErrorClass{"timeout"}
	ClassValidation  = ErrorClass{"validation"}
	ClassAuth        = ErrorClass{"auth"}
	ClassPermission  = ErrorClass{"permission"}
	ClassNotFound    = ErrorClass{"not_found"}
	ClassConflict    = ErrorClass{"conflict"}
	ClassConfig      = ErrorClass{"config"}
	ClassUnknown     = ErrorClass{"unknown"}
)

// ErrorClasses lists every error class.
var ErrorClasses = []ErrorClass{ClassTransient, ClassRateLimited, ClassTimeout, ClassValidation,
	ClassAuth, ClassPermission, ClassNotFound, ClassConflict, ClassConfig, ClassUnknown}

func (c ErrorClass) String() string { return c.s }

// IsZero reports whether c is the zero class.
func (c ErrorClass) IsZero() bool { return c.s == "" }

// LeavesDoubt reports whether an error of this class, seen after the worker
// began the provider call, leaves open whether the provider acted.
func (c ErrorClass) LeavesDoubt() bool {
	return c == ClassTimeout || c == ClassUnknown || c == ClassTransient
}

// ParseErrorClass reads an error class name.
func ParseErrorClass(v string) (ErrorClass, error) { return parse(v, ErrorClasses, "error class") }

// Outcome is what a worker reports when it settles an attempt.
type Outcome struct{ s string }

// The outcomes a worker may report.
var (
	OutcomeCompleted       = Outcome{"completed"}
	OutcomeFailedRetryable = Outcome{"failed_retryable"}
	OutcomeFailedTerminal  = Outcome{"failed_terminal"}
	OutcomeUnknown         = Outcome{"unknown_outcome"}
)

// Outcomes lists every outcome.
var Outcomes = []Outcome{OutcomeCompleted, OutcomeFailedRetryable, OutcomeFailedTerminal, OutcomeUnknown}

func (o Outcome) String() string { return o.s }

// ParseOutcome reads an outcome name.
func ParseOutcome(v string) (Outcome, error) { return parse(v, Outcomes, "outcome") }

// ClaimRefusal is why an operation cannot be claimed now.
type ClaimRefusal struct{ s string }

// The not_claimable reasons of API.md.
var (
	RefusedCompleted        = ClaimRefusal{"completed"}
	RefusedInProgress       = ClaimRefusal{"in_progress"}
	RefusedRetryLater       = ClaimRefusal{"retry_later"}
	RefusedAwaitingApproval = ClaimRefusal{"awaiting_approval"}
	RefusedHandedOff        = ClaimRefusal{"handed_off"}
	RefusedCancelled        = ClaimRefusal{"cancelled"}
)

func (r ClaimRefusal) String() string { return r.s }

// IsZero reports whether r is the zero reason.
func (r ClaimRefusal) IsZero() bool { return r.s == "" }

// Role is what a person may do; roles are ordered, except Auditor, which
// only adds the right to export the audit trail.
type Role struct {
	s    string
	rank int
}

// The roles, lowest first.
var (
	RoleViewer   = Role{"viewer", 1}
	RoleOperator = Role{"operator", 2}
	RoleApprover = Role{"approver", 3}
	RoleAdmin    = Role{"admin", 4}
	RoleAuditor  = Role{"auditor", 1}
)

// Roles lists every role.
var Roles = []Role{RoleViewer, RoleOperator, RoleApprover, RoleAdmin, RoleAuditor}

func (r Role) String() string { return r.s }

// IsZero reports whether r is the zero role.
func (r Role) IsZero() bool { return r.s == "" }

// AtLeast reports whether r includes the rights of min.
func (r Role) AtLeast(min Role) bool { return r.rank >= min.rank && r.rank > 0 }

// ParseRole reads a role name.
func ParseRole(v string) (Role, error) { return parse(v, Roles, "role") }

// ActorKind tells who acted: a workflow (API token), a person or the system.
type ActorKind struct{ s string }

// The actor kinds.
var (
	ActorWorkflow = ActorKind{"workflow"}
	ActorPerson   = ActorKind{"person"}
	ActorSystem   = ActorKind{"system"}
)

// ActorKinds lists every actor kind.
var ActorKinds = []ActorKind{ActorWorkflow, ActorPerson, ActorSystem}

func (k ActorKind) String() string { return k.s }

// ParseActorKind reads an actor kind name.
func ParseActorKind(v string) (ActorKind, error) { return parse(v, ActorKinds, "actor kind") }

// ResolveAction is a person's resolution of a desk item.
type ResolveAction struct{ s string }

// The resolve actions of API.md.
var (
	ResolveConfirmExecuted    = ResolveAction{"confirm_executed"}
	ResolveConfirmNotExecuted = ResolveAction{"confirm_not_executed"}
	ResolveRetry              = ResolveAction{"retry"}
	ResolveCancel             = ResolveAction{"cancel"}
	// ResolveResendSameKey sends an unknown outcome back to be retried under
	// the same provider key, allowed only while the provider deduplicates it.
	ResolveResendSameKey = ResolveAction{"resend_same_key"}
)

// ResolveActions lists every resolve action.
var ResolveActions = []ResolveAction{ResolveConfirmExecuted, ResolveConfirmNotExecuted, ResolveRetry, ResolveCancel, ResolveResendSameKey}

func (a ResolveAction) String() string { return a.s }

// ParseResolveAction reads a resolve action name.
func ParseResolveAction(v string) (ResolveAction, error) {
	return parse(v, ResolveActions, "resolve action")
}

type named interface{ String() string }

func parse[T named](v string, set []T, what string) (T, error) {
	for _, x := range set {
		if x.String() == v {
			return x, nil
		}
	}
	var zero T
	return zero, fmt.Errorf("unknown %s %q", what, v)
}
