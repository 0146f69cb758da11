package domain

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"time"
	"unicode/utf8"
)

// Registration is a workflow's request to register an operation.
type Registration struct {
	Namespace     string
	Key           string
	Type          string
	Content       json.RawMessage // any JSON object; canonicalized by NewOperation
	EventID       string
	Source        string
	CorrelationID string
	CausedBy      string
	Supersedes    string
	ProviderKey   string
	Claim         *Claim

	// held is set by the Ledger when the registration must wait for a
	// person (twin.go): it is registered awaiting approval with this error.
	held *ErrorInfo
	// echo is set by the Ledger when the registration is an echo of our
	// own effect (identity.go): it is registered failed_terminal with this
	// error, naming echoOf, the original.
	echo   *ErrorInfo
	echoOf *Operation
}

var keyRE = regexp.MustCompile(`^[A-Za-z0-9._:/@+=-]{1,255}$`)

// ValidKey reports whether s may be an operation key (or an event ID).
func ValidKey(s string) bool { return keyRE.MatchString(s) }

// MaxContentBytes bounds an operation's content (canonical JSON).
const MaxContentBytes = 64 << 10

// Validate lists every problem with the registration's fields.
func (r Registration) Validate() []FieldError {
	var errs []FieldError
	bad := func(f, m string) { errs = append(errs, FieldError{f, m}) }
	if !ValidKey(r.Key) {
		bad("key", "must be 1-255 characters from A-Z a-z 0-9 . _ : / @ + = -")
	}
	if r.Type == "" {
		bad("type", "is required")
	}
	if len(r.Content) == 0 {
		bad("content", "is required")
	}
	for _, f := range []struct{ name, v string }{{"event_id", r.EventID}, {"caused_by", r.CausedBy}, {"supersedes", r.Supersedes}} {
		if f.v != "" && !ValidKey(f.v) {
			bad(f.name, "must be 1-255 characters from A-Z a-z 0-9 . _ : / @ + = -")
		}
	}
	for _, f := range []struct{ name, v string }{{"source", r.Source}, {"correlation_id", r.CorrelationID}, {"provider_key", r.ProviderKey}} {
		if utf8.RuneCountInString(f.v) > 255 || !ValidText(f.v) {
			bad(f.name, "must be valid text of at most 255 characters, without NUL")
		}
	}
	if r.Claim != nil {
		errs = append(errs, r.Claim.validate("claim.")...)
	}
	return errs
}

func (c Claim) validate(prefix string) []FieldError {
	var errs []FieldError
	if c.Worker == "" || utf8.RuneCountInString(c.Worker) > 200 || !ValidText(c.Worker) {
		errs = append(errs, FieldError{prefix + "worker", "must be 1-200 characters, without NUL"})
	}
	errs = append(errs, validLease(prefix+"lease_seconds", c.Lease)...)
	return errs
}

// MaxLease bounds every lease a worker may ask for.
const MaxLease = 3600

func validLease(field string, d time.Duration) []FieldError {
	if d < 0 || d > MaxLease*time.Second {
		return []FieldError{{field, fmt.Sprintf("must be between 1 and %d seconds", MaxLease)}}
	}
	return nil
}

// ProviderKeyFor derives the idempotency key sent to the provider: stable for
// the operation, identical on every attempt.
func ProviderKeyFor(namespace, key string) string {
	return "hk_" + SHA256Hex([]byte(namespace + "\x00" + key))[:32]
}

// CodeLoopDetected is the error code of an operation refused at
// registration because its caused_by chain loops or runs too deep.
const CodeLoopDetected = "loop_detected"

// Looped reports whether the operation was refused as a loop: a retry runs
// what triggered itself again unless the cause is fixed.
func (op Operation) Looped() bool {
	return op.LastError != nil && op.LastError.Code == CodeLoopDetected
}

// MaxCausationDepth is the default bound on caused_by chains.
const MaxCausationDepth = 5

// LoopDetected reports whether registering an operation of type typ, caused
// by a chain of operations whose types are ancestors (nearest first), would
// repeat a type or exceed maxDepth operations.
func LoopDetected(typ string, ancestors []string, maxDepth int) bool {
	return slices.Contains(ancestors, typ) || len(ancestors)+1 > maxDepth
}

// NewOperation decides the first state of a registered operation and, when
// asked and possible, claims it in the same change. content is canonical.
func NewOperation(r Registration, content []byte, loop bool, env Env) (Change, error) {
	op := Operation{
		ID: env.NewID("op"), Namespace: r.Namespace, Key: r.Key, Type: r.Type,
		EventID: r.EventID, Source: r.Source, CorrelationID: r.CorrelationID,
		CausedBy: r.CausedBy, Supersedes: r.Supersedes,
		Fingerprint: Fingerprint(r.Type, content), IdentityHash: IdentityHash(r.Type, content, env.Card.Identity), ContentVersion: 1,
		ContentSHA256: SHA256Hex(content), Content: content,
		ProviderKey: r.ProviderKey, CreatedAt: env.Now, UpdatedAt: env.Now,
	}
	if op.ProviderKey == "" {
		op.ProviderKey = ProviderKeyFor(r.Namespace, r.Key)
	}
	to := Received
	switch {
	case loop:
		to = FailedTerminal
		op.LastError = &ErrorInfo{Class: ClassConfig, Code: CodeLoopDetected,
			Message: "the caused_by chain repeats an operation type or is too deep"}
	case r.echo != nil:
		to = FailedTerminal
		op.LastError = r.echo
	case r.held != nil:
		to = AwaitingApproval
		op.LastError = r.held
	case env.Card.RequiresApproval:
		to = AwaitingApproval
	}
	ch := begin(op, env, to, "registered")
	ch.FromVersion = 0
	ch.Events[0].FromState = ""
	ch.Content = &ContentChange{New: true, Version: ContentVersion{OperationID: op.ID, Version: 1,
		Content: content, SHA256: op.ContentSHA256, CreatedAt: env.Now}}
	registered := map[string]any{"fingerprint": op.Fingerprint, "content_sha256": op.ContentSHA256,
		"event_id": r.EventID, "caused_by": r.CausedBy, "supersedes": r.Supersedes, "held": heldDetail(r.held)}
	if r.echo != nil && r.echoOf != nil {
		registered["echo_of"] = map[string]any{"id": r.echoOf.ID, "key": r.echoOf.Key}
	}
	if r.Claim != nil && to == Received {
		claimed, claimDetail, err := grantClaim(ch.Op, *r.Claim, env)
		if err == nil && r.Claim.Begin {
			claimed, err = claimAndBegin(claimed, env)
		}
		if err != nil {
			return Change{}, err
		}
		maps.Copy(registered, claimDetail)
		registerAndClaim(&ch, claimed, registered)
	} else {
		ch.Events[0].Detail = detail(registered)
	}
	followUp(Operation{}, &ch, env)
	stamp(&ch, env)
	seal(&ch)
	return ch, nil
}

// The events of a registration that claims in the same change: one event
// for the one change, named for what it did, whose detail carries both the
// registration's members and the claim's (worker, attempt, lease expiry,
// provider key). Trails written before have a registered event and then
// the claim's own; both read and verify alike.
const (
	// ActionRegisteredAndClaimed: registered, and the lease granted.
	ActionRegisteredAndClaimed = "registered_and_claimed"
	// ActionRegisteredAndBegan: registered, the lease granted, and "about
	// to call the provider" recorded (Claim.Begin).
	ActionRegisteredAndBegan = "registered_and_began"
)

// registerAndClaim folds the claim decided on the new operation into its
// registration: one version, one event, the attempt inserted with it. d is
// the event's detail: the registration's members and the claim's.
func registerAndClaim(ch *Change, claimed Change, d map[string]any) {
	version := ch.Op.Version
	ch.Op = claimed.Op
	ch.Op.Version = version
	ch.Attempt = claimed.Attempt
	ch.KeyUse = claimed.KeyUse
	ev := &ch.Events[0]
	ev.Action, ev.ToState = ActionRegisteredAndClaimed, ch.Op.State.String()
	if claimed.Events[0].Action == ActionClaimedAndBegan {
		ev.Action = ActionRegisteredAndBegan
	}
	ev.Detail = detail(d)
}
