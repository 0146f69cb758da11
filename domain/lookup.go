package domain

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// LookupResult is what one look at the provider found.
type LookupResult struct{ s string }

// The lookup results.
var (
	// LookupFoundDone: a record under the key, with the content sent and
	// in a done state.
	LookupFoundDone = LookupResult{"found"}
	// LookupNotFound: the provider answered that it has no such record.
	LookupNotFound = LookupResult{"not_found"}
	// LookupConflict: a record under the key, but with other content: it
	// proves something happened, not that this operation did.
	LookupConflict = LookupResult{"conflict"}
	// LookupUnsure: an answer the rules cannot read as found or not found
	// (another status, a record not yet done, no reference).
	LookupUnsure = LookupResult{"unsure"}
	// LookupError: no answer (refused, timed out, unreachable) or the
	// request could not be made.
	LookupError = LookupResult{"error"}
)

func (r LookupResult) String() string { return r.s }

// ParseLookupResult reads a lookup result.
func ParseLookupResult(v string) (LookupResult, error) {
	return parse(v, []LookupResult{LookupFoundDone, LookupNotFound, LookupConflict, LookupUnsure, LookupError}, "lookup result")
}

// LookupTry is one request to the provider and what its answer said: the
// evidence the timeline and the desk show. It never holds the secret, the
// headers or the answer's body, only what was read from it.
type LookupTry struct {
	At        time.Time
	Method    string
	URL       string
	Status    int
	LatencyMs int64
	Result    LookupResult
	Ref       string
	State     string
	Conflicts []string // the compared answer fields that differ from the content
	// Bound is what ties a found record to the operation: BoundByKey (its
	// provider key in the record) or BoundByCompare (the compare rules
	// matched); "" when nothing does.
	Bound string
	Error string
}

// What binds a found record to the operation looked up.
const (
	BoundByKey     = "key"
	BoundByCompare = "compare"
)

// BoundFound reports whether the try found the operation's own record: a
// found record bound to it. Only such a try completes an operation.
func (t LookupTry) BoundFound() bool { return t.Result == LookupFoundDone && t.Bound != "" }

// Summary is the try in a few words: "404 not_found", "error: timeout".
func (t LookupTry) Summary() string {
	var b strings.Builder
	if t.Status > 0 {
		fmt.Fprintf(&b, "%d ", t.Status)
	}
	b.WriteString(t.Result.String())
	if t.Ref != "" {
		b.WriteString(" " + t.Ref)
	}
	if len(t.Conflicts) > 0 {
		b.WriteString(" (differs: " + strings.Join(t.Conflicts, ", ") + ")")
	}
	if t.Result == LookupFoundDone && t.Bound == "" {
		b.WriteString(" (not bound to this operation)")
	}
	if t.State != "" {
		b.WriteString(" state " + t.State)
	}
	if t.Error != "" {
		b.WriteString(": " + t.Error)
	}
	return b.String()
}

// LookupEvidence is the tries in one line: "looked up 3× at 10:00:00,
// 10:00:05, 10:00:15 UTC: 404 not_found / 404 not_found / error: timeout".
func LookupEvidence(tries []LookupTry) string {
	if len(tries) == 0 {
		return "not looked up"
	}
	ats, sums := make([]string, len(tries)), make([]string, len(tries))
	for i, t := range tries {
		ats[i], sums[i] = t.At.UTC().Format(time.TimeOnly), t.Summary()
	}
	return fmt.Sprintf("looked up %d× at %s UTC: %s", len(tries), strings.Join(ats, ", "), strings.Join(sums, " / "))
}

// LookupConclusion is what the lookups of one attempt settle.
type LookupConclusion struct{ s string }

// The conclusions.
var (
	// ConcludedFound: completed by the system, with the reference.
	ConcludedFound = LookupConclusion{"found"}
	// ConcludedNotFound: an authoritative not-found; the card's retry
	// rules re-send under the same provider key.
	ConcludedNotFound = LookupConclusion{"not_found"}
	// ConcludedDesk: a person decides, the evidence shown first.
	ConcludedDesk = LookupConclusion{"desk"}
)

func (c LookupConclusion) String() string { return c.s }

// LookupVerdict is the judgment after a try: done with a conclusion, or
// look again at Next.
type LookupVerdict struct {
	Done       bool
	Conclusion LookupConclusion
	Next       time.Time
}

// JudgeLookup is JudgeLookupCall for a call taken to have begun when the
// lookups started: later than any real begin, so never an earlier verdict.
func JudgeLookup(card Card, tries []LookupTry, started, now time.Time, backoff time.Duration) LookupVerdict {
	return JudgeLookupCall(card, tries, started, started, now, backoff)
}

// JudgeLookupCall decides after the latest of tries, the first made at
// started, for the call begun at began (the attempt's last begin): a found
// bound to the operation settles at once; a conflict, or a found that
// nothing binds to the operation, goes to a person at once (evidence, not
// proof); anything
// else is looked at again, first after backoff and then twice as long each
// time, until the card's window has passed. Then only an authoritative
// not-found may lead to a retry, and only once the call's deadline and the
// window after it have passed (NotFoundFrom): a not-found before then is
// looked at again at that moment, since the call may still land
// (invariant 13). Anything else goes to the desk.
func JudgeLookupCall(card Card, tries []LookupTry, started, began, now time.Time, backoff time.Duration) LookupVerdict {
	last := tries[len(tries)-1]
	switch last.Result {
	case LookupFoundDone:
		if !last.BoundFound() {
			return LookupVerdict{Done: true, Conclusion: ConcludedDesk}
		}
		return LookupVerdict{Done: true, Conclusion: ConcludedFound}
	case LookupConflict:
		return LookupVerdict{Done: true, Conclusion: ConcludedDesk}
	}
	window := card.LookupAdapter.Window
	end := started.Add(window)
	authoritativeNotFound := last.Result == LookupNotFound && card.LookupAuthoritative
	if from := card.NotFoundFrom(began); authoritativeNotFound && from.After(end) {
		end = from
	}
	if now.Before(end) {
		wait := backoff << min(len(tries)-1, 20)
		return LookupVerdict{Next: minTime(now.Add(wait), end)}
	}
	if authoritativeNotFound {
		return LookupVerdict{Done: true, Conclusion: ConcludedNotFound}
	}
	return LookupVerdict{Done: true, Conclusion: ConcludedDesk}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// AwaitingLookup reports whether op is in unknown_outcome waiting for
// Handoff's own lookup rather than for a person: its card has an adapter
// and the desk clock was not started. Such an item has not been handed
// off yet — no desk entry, no notification — until the lookup concludes.
func AwaitingLookup(op Operation, card Card) bool {
	return op.State == UnknownOutcome && card.LookupAdapter != nil && op.DeskEnteredAt == nil
}

// deferToLookup reports whether the change that moved the operation from
// before into unknown_outcome waits for the lookup instead of handing the
// operation to a person at once.
func deferToLookup(before Operation, n Operation, env Env) bool {
	return n.State == UnknownOutcome && before.State != UnknownOutcome && env.Card.LookupAdapter != nil &&
		env.Actor.Kind != ActorPerson
}

// ConcludeLookup settles an operation awaiting lookup with what the
// lookups of its attempt found.
type ConcludeLookup struct {
	Attempt    int // the attempt looked up; a later one is not this lookup's
	Conclusion LookupConclusion
	Tries      []LookupTry
}

func (ConcludeLookup) name() string { return "conclude_lookup" }

// The audit actions of a lookup's conclusion.
const (
	ActionLookedUp           = "looked_up"
	ActionLookupNotFound     = "lookup_not_found"
	ActionLookupInconclusive = "lookup_inconclusive"
)

func decideConcludeLookup(op Operation, c ConcludeLookup, env Env) (Change, error) {
	if !AwaitingLookup(op, env.Card) || op.Attempts != c.Attempt || len(c.Tries) == 0 {
		return Change{}, Errorf(EInvalidTransition, "operation %s is not awaiting a lookup of attempt %d", op.ID, c.Attempt)
	}
	last := c.Tries[len(c.Tries)-1]
	evidence := LookupEvidence(c.Tries)
	conclusion := c.Conclusion
	if conclusion == ConcludedFound && !last.BoundFound() {
		conclusion = ConcludedDesk // a record nothing ties to this operation is evidence for a person
	}
	d := map[string]any{"evidence": evidence, "tries": lookupTriesDetail(c.Tries), "conclusion": conclusion.String()}
	switch conclusion {
	case ConcludedFound:
		if last.Ref == "" {
			return Change{}, Errorf(EInvalidTransition, "a found lookup needs the provider's reference")
		}
		ch := begin(op, env, Completed, ActionLookedUp)
		ch.Op.Result = &Result{Ref: last.Ref}
		d["result_ref"] = last.Ref
		ch.Events[0].Detail = detail(d)
		return ch, nil
	case ConcludedNotFound:
		ch := begin(op, env, FailedRetryable, ActionLookupNotFound)
		ch.Op.LastError = &ErrorInfo{Class: ClassNotFound, Code: "not_found_at_provider", Message: evidence}
		applyRetryLimits(&ch, env, 0)
		d["provider_key"] = op.ProviderKey
		ch.Events[0].Detail = detail(d)
		renewAfterNotFound(&ch, op, env)
		return ch, nil
	default:
		ch := begin(op, env, UnknownOutcome, ActionLookupInconclusive)
		e := ErrorInfo{Class: ClassUnknown, Code: "lookup_inconclusive"}
		if op.LastError != nil {
			e = *op.LastError
		}
		e.Message = evidence
		ch.Op.LastError = &e
		ch.Events[0].Detail = detail(d)
		return ch, nil
	}
}

func lookupTriesDetail(tries []LookupTry) []map[string]any {
	out := make([]map[string]any, len(tries))
	for i, t := range tries {
		out[i] = map[string]any{"at": t.At.UTC().Format(time.RFC3339Nano), "method": t.Method, "url": t.URL,
			"status": t.Status, "latency_ms": t.LatencyMs, "result": t.Result.String(), "summary": t.Summary()}
		if t.Bound != "" {
			out[i]["bound"] = t.Bound
		}
	}
	return out
}

// LookupClaim is one attempt's lookup, claimed by one reconciler for a
// lease: the tries made so far and when the first was.
type LookupClaim struct {
	OperationID string
	Attempt     int
	ClaimToken  int64
	StartedAt   *time.Time // nil before the first try
	Tries       []LookupTry
}

// LookupStore keeps the lookups in progress, one per operation and attempt,
// so that every replica can run the loop and each try is made once.
type LookupStore interface {
	// ClaimLookups claims up to limit due lookups of operations of the
	// given types awaiting one, for lease, each with a new claim token.
	ClaimLookups(ctx context.Context, types []string, now time.Time, lease time.Duration, limit int) ([]LookupClaim, error)
	// RecordLookupTry appends a try and sets when the next is due, with a
	// compare-and-set on the claim token; false when another reconciler
	// claimed the lookup meanwhile.
	RecordLookupTry(ctx context.Context, c LookupClaim, t LookupTry, next time.Time, conclusion string) (bool, error)
	// CloseLookup records the conclusion once the operation carries it.
	CloseLookup(ctx context.Context, c LookupClaim, conclusion string) error
	// LookupsOf lists an operation's lookups, newest attempt first.
	LookupsOf(ctx context.Context, operationID string) ([]LookupClaim, error)
}

// LookupTypes lists the types whose cards have a lookup adapter.
func (cs Cards) LookupTypes() []string {
	var out []string
	for _, c := range cs.Sorted() {
		if c.LookupAdapter != nil {
			out = append(out, c.Name)
		}
	}
	return out
}

// LookupRunner makes one lookup with an adapter (lookup.Looker); the
// wiring sets it on the Desk for the desk's "Look up now".
type LookupRunner interface {
	Look(ctx context.Context, a LookupAdapter, op Operation) LookupTry
}

// RecordLookup records a lookup a person asked for: evidence, not a
// decision, so like a note it does not make a page stale.
type RecordLookup struct{ Try LookupTry }

func (RecordLookup) name() string { return "record_lookup" }

// ActionLookupRun is the audit action of a person's lookup.
const ActionLookupRun = "lookup_run"

func decideRecordLookup(op Operation, c RecordLookup, env Env) (Change, error) {
	ch := begin(op, env, op.State, ActionLookupRun)
	d := map[string]any{"evidence": LookupEvidence([]LookupTry{c.Try}), "tries": lookupTriesDetail([]LookupTry{c.Try}),
		"result": c.Try.Result.String(), "result_ref": c.Try.Ref}
	ch.Events[0].Detail = detail(d)
	return ch, nil
}

// LookUpNow runs the card's lookup adapter for a person and records what it
// found in the operation's audit trail, as a lookup rather than a
// decision: the person still decides.
func (l *Desk) LookUpNow(ctx context.Context, actor Actor, id string) (LookupTry, error) {
	if err := requirePerson(actor, RoleOperator); err != nil {
		return LookupTry{}, err
	}
	if err := checkID(id, "operation"); err != nil {
		return LookupTry{}, err
	}
	op, _, err := l.store.Load(ctx, scope(actor), id)
	if err != nil {
		return LookupTry{}, err
	}
	card, err := l.Cards.Get(op.Type)
	if err != nil {
		return LookupTry{}, err
	}
	if card.LookupAdapter == nil {
		return LookupTry{}, Errorf(EInvalidTransition, "operation type %s has no lookup_adapter", op.Type)
	}
	if l.Looker == nil {
		return LookupTry{}, Errorf(EUnavailable, "lookups are not configured on this server")
	}
	t := l.Looker.Look(ctx, *card.LookupAdapter, op) // no transaction is open
	t.At = t.At.UTC().Truncate(time.Microsecond)
	_, err = l.mutate(ctx, actor, id, RecordLookup{Try: t})
	return t, err
}
