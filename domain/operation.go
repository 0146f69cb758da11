package domain

import (
	"encoding/json"
	"strings"
	"time"
)

// Operation is one business intent with one side effect on one external
// system, named by the caller's stable key within a namespace.
type Operation struct {
	ID            string
	Namespace     string
	Key           string
	Type          string
	State         State
	Version       int64 // bumped by every change; the audit stream's sequence
	EventID       string
	Source        string
	CorrelationID string
	CausedBy      string // key of the operation whose side effect triggered this one
	Supersedes    string // id of the cancelled operation this one replaces
	SupersededBy  string

	Fingerprint string // "sha256:<hex>" over canonical {type, content}
	// IdentityHash is what twins and echoes compare: the fingerprint, or
	// the hash of the fields the card's identity names (IdentityHash).
	IdentityHash   string
	ContentVersion int
	ContentSHA256  string
	Content        json.RawMessage // the current snapshot, canonical JSON
	ContentAuthor  string          // who made the current snapshot; "" for the registering workflow
	Approval       *Approval
	// ContentPurgedAt is when content retention emptied Content, every
	// content version and the result data; nil while they are kept.
	ContentPurgedAt *time.Time
	// ContentHidden says the card keeps the content (and result data) from
	// this reader (content_visible_to); ContentBytes is the content's size.
	ContentHidden bool
	ContentBytes  int

	ProviderKey            string
	ProviderKeyFirstSentAt *time.Time
	// ProviderKeySentVersion is the content version ProviderKey was first
	// sent with; 0 while it was not sent (or was sent before this was
	// kept). A key is never sent with other content (invariant 9).
	ProviderKeySentVersion int

	Attempts       int
	RetryFrom      int        // attempts made before the last human retry; they do not count towards the card's limits
	FirstAttemptAt *time.Time // first attempt since the last human retry
	LeaseToken     int64      // the last fencing token issued; the next claim gets a greater one
	Lease          *Lease
	NextRetryAt    *time.Time

	Result     *Result
	LastError  *ErrorInfo
	Assignee   string // the assignee's display identity: their email, or subject without one
	Resolution *Resolution
	// AssigneeIssuer and AssigneeSubject name the assignee as their
	// identity provider does: an email can change or recur at another
	// issuer, these cannot. Both "" for an assignment recorded before they
	// were kept.
	AssigneeIssuer, AssigneeSubject string

	// The desk clock: when the operation last came to wait on a person
	// (desk or approval), when a person took it, when it was escalated.
	DeskEnteredAt *time.Time
	AssignedAt    *time.Time
	EscalatedAt   *time.Time

	// AuditHead is the hash of the last event in the operation's audit
	// stream, so the next event can be chained without reading it back.
	AuditHead string

	CreatedAt time.Time
	UpdatedAt time.Time
}

// AssignedTo reports whether the operation is assigned to the person a:
// the same (issuer, subject) whatever their email says now, or, for an
// assignment recorded before those were kept, the same identity.
func (op Operation) AssignedTo(a Actor) bool {
	switch {
	case op.AssigneeSubject != "":
		return op.AssigneeIssuer == a.Issuer && op.AssigneeSubject == a.Subject
	case op.Assignee != "":
		return strings.EqualFold(op.Assignee, a.Identity())
	}
	return false
}

// Lease is the exclusive, time-limited right of one worker to run the
// operation.
type Lease struct {
	Token     int64
	Worker    string
	ExpiresAt time.Time
}

// Expired reports whether the lease has run out at now.
func (l *Lease) Expired(now time.Time) bool { return l != nil && !now.Before(l.ExpiresAt) }

// Result is the provider's record of the completed side effect.
type Result struct {
	Ref  string
	Data json.RawMessage
}

// ErrorInfo is the last error seen, as the worker or the system reported it.
type ErrorInfo struct {
	Class   ErrorClass
	Code    string
	Message string
}

// Approval records who approved which content version.
type Approval struct {
	ContentVersion int
	By             string
	At             time.Time
}

// Resolution records a person's decision on a desk item.
type Resolution struct {
	Action string
	By     string
	Reason string
	At     time.Time
}

// Attempt is one try at an operation, created by each claim.
type Attempt struct {
	ID          string
	OperationID string
	Number      int
	Worker      string
	LeaseToken  int64
	ProviderKey string // the provider key the attempt was given to send, as its claim's event recorded it
	ClaimedAt   time.Time
	BeganAt     *time.Time
	SettledAt   *time.Time
	Outcome     string // the state the attempt ended in, or "lease_expired"
	Error       *ErrorInfo
	// SettleSHA256 is SettleDigest of the settle that ended the attempt
	// ("" when none did): what a repeated settle is compared with.
	SettleSHA256 string
}

// ContentVersion is one snapshot of an operation's content.
type ContentVersion struct {
	OperationID string
	Version     int
	Content     json.RawMessage
	SHA256      string
	CreatedBy   string // "" for the registering workflow
	CreatedAt   time.Time
	Reason      string
	ApprovedBy  string
	ApprovedAt  *time.Time
	RejectedBy  string
	RejectedAt  *time.Time
	Hidden      bool // the card keeps Content from this reader; Bytes is its size
	Bytes       int

	// CreatedByIssuer and CreatedBySubject name the reviser as their
	// identity provider does; four eyes compare these, not the email.
	CreatedByIssuer, CreatedBySubject string
}

// RevisedBy reports whether a made content version v, as four eyes see
// it: the same (issuer, subject) whatever their email says now, or the
// same identity (the verified email) under another subject — the cautious
// choice. The registering workflow's version 1 has no reviser.
func (v ContentVersion) RevisedBy(a Actor) bool {
	if v.CreatedBy == "" {
		return false
	}
	samePerson := v.CreatedBySubject != "" && v.CreatedByIssuer == a.Issuer && v.CreatedBySubject == a.Subject
	return samePerson || v.CreatedBy == a.Identity()
}

// Actor is who asked for a change.
type Actor struct {
	Kind ActorKind
	// Name is the token name for a workflow, the display name or email for a
	// person, the component for the system.
	Name      string
	Namespace string // a workflow's only namespace; "" for people (but a drill credential) and the system
	Issuer    string
	Subject   string
	Email     string
	Role      Role
}

// Identity is the actor's stable name in audit events and approvals.
func (a Actor) Identity() string {
	switch {
	case a.Kind == ActorPerson && a.Email != "":
		return a.Email
	case a.Kind == ActorPerson && a.Subject != "":
		return a.Subject
	default:
		return a.Name
	}
}

// Person is the actor as one of the people an item can be assigned to.
func (a Actor) Person() Person {
	return Person{Issuer: a.Issuer, Subject: a.Subject, Email: a.Email, Name: a.Name, Role: a.Role}
}

// System is the actor for time-driven transitions.
var System = Actor{Kind: ActorSystem, Name: "handoff"}

// AuditEvent records one transition or decision. Seq is the operation's
// version after the change, so each operation's events form a gap-free stream.
type AuditEvent struct {
	ID          string
	Stream      string // the operation id, or SystemStream
	Seq         int64
	OperationID string
	Namespace   string
	At          time.Time
	Actor       Actor
	Action      string
	FromState   string
	ToState     string
	Reason      string
	Detail      json.RawMessage // evidence, error, result: what the reader needs
	RequestID   string
	ClientAddr  string
	PrevHash    string
	Hash        string
}

// SystemStream is the audit stream of events that belong to no operation.
const SystemStream = "system"
