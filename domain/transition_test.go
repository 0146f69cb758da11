package domain_test

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// TestDecide runs every command against an operation in every state. The
// expectation table has one row per command and one column per state, in
// the order of domain.States; a row of the wrong length, a command without a
// row or a row without a command fails the test, so no pair can be missed.

const (
	fixtureContent = `{"due":"2026-12-01","owner":"u_9","title":"Follow up"}`
	revisedContent = `{"due":"2026-12-02","owner":"u_9","title":"Follow up, revised"}`
)

// Moments of the fake clock relative to the fixtures.
var (
	beforeRetryAt = t0.Add(-30 * time.Second) // failed_retryable is not due yet; leases are live
	leaseExpired  = t0.Add(time.Minute)       // the fixtures' leases ran out at t0+20s
	elapsedPassed = t0.Add(time.Hour)         // first attempt at t0-10m + max_elapsed 1h has passed
)

// fixture is an operation in state s at version 7, as the store would load it.
func fixture(s domain.State) domain.Operation {
	content := []byte(fixtureContent)
	op := domain.Operation{
		ID: "op_01TEST", Namespace: "campaigns", Key: "evt_42:crm_task", Type: "crm.task.create",
		State: s, Version: 7, EventID: "evt_42", Source: "shop-webhook",
		Fingerprint: domain.Fingerprint("crm.task.create", content), ContentVersion: 1,
		ContentSHA256: domain.SHA256Hex(content), Content: content,
		ProviderKey: domain.ProviderKeyFor("campaigns", "evt_42:crm_task"),
		Attempts:    2, LeaseToken: 2, FirstAttemptAt: ptr(t0.Add(-10 * time.Minute)),
		AuditHead: "hash-of-event-7", CreatedAt: t0.Add(-time.Hour), UpdatedAt: t0.Add(-time.Minute),
	}
	if s != domain.AwaitingApproval {
		op.Approval = &domain.Approval{ContentVersion: 1, By: carol.Identity(), At: t0.Add(-50 * time.Minute)}
	}
	switch s {
	case domain.AwaitingApproval: // alice revised the content; someone else must decide
		op.ContentVersion, op.Content, op.ContentAuthor = 2, []byte(revisedContent), alice.Identity()
		op.ContentSHA256 = domain.SHA256Hex(op.Content)
	case domain.Processing, domain.ActionPending:
		op.Attempts, op.LeaseToken = 3, 3
		op.Lease = &domain.Lease{Token: 3, Worker: "w-1", ExpiresAt: t0.Add(20 * time.Second)}
		if s == domain.ActionPending {
			op.ProviderKeyFirstSentAt, op.ProviderKeySentVersion = ptr(t0.Add(-5*time.Second)), 1
		}
	case domain.Completed:
		op.ProviderKeyFirstSentAt, op.ProviderKeySentVersion = ptr(t0.Add(-5*time.Minute)), 1
		op.Result = &domain.Result{Ref: "crm_1", Data: json.RawMessage(`{"id":1}`)}
	case domain.FailedRetryable:
		op.NextRetryAt = ptr(t0.Add(-time.Second))
		op.LastError = &domain.ErrorInfo{Class: domain.ClassRateLimited, Code: "429"}
	case domain.FailedTerminal:
		op.LastError = &domain.ErrorInfo{Class: domain.ClassValidation, Code: "400"}
	case domain.UnknownOutcome:
		op.ProviderKeyFirstSentAt, op.ProviderKeySentVersion = ptr(t0.Add(-5*time.Minute)), 1
		op.LastError = &domain.ErrorInfo{Class: domain.ClassTimeout, Message: "read timeout"}
	case domain.Cancelled:
		op.Resolution = &domain.Resolution{Action: "cancel", By: bob.Identity(), Reason: "duplicate", At: t0}
	}
	return op
}

// want is one cell of the matrix: accepted into a state, accepted as a
// repeat that changes nothing, or refused with a code (and claim reason).
type want struct {
	to     domain.State
	same   bool // accepted, state unchanged
	repeat bool // accepted, Change.Unchanged
	code   domain.Code
	reason domain.ClaimRefusal
}

func to(s domain.State) want        { return want{to: s} }
func nc(r domain.ClaimRefusal) want { return want{code: domain.ENotClaimable, reason: r} }
func refused(c domain.Code) want    { return want{code: c} }
func (w want) accepted() bool       { return w.code == "" }
func (w want) state(from domain.State) domain.State {
	if w.same {
		return from
	}
	return w.to
}

var (
	same      = want{same: true}
	repeat    = want{repeat: true}
	stale     = refused(domain.EStaleLease)
	invalid   = refused(domain.EInvalidTransition)
	conflict  = refused(domain.EVersionConflict)
	forbidden = refused(domain.EForbidden)
	badInput  = refused(domain.EInvalid)
)

func allStates(w want) []want {
	row := make([]want, len(domain.States))
	for i := range row {
		row[i] = w
	}
	return row
}

// onlyIn is a row refused with other everywhere but the given states.
func onlyIn(other want, cells map[domain.State]want) []want {
	row := allStates(other)
	for i, s := range domain.States {
		if w, ok := cells[s]; ok {
			row[i] = w
		}
	}
	return row
}

func matrix() map[string][]want {
	var (
		aa, rc, pr, ap = domain.AwaitingApproval, domain.Received, domain.Processing, domain.ActionPending
		co, fr, ft, uo = domain.Completed, domain.FailedRetryable, domain.FailedTerminal, domain.UnknownOutcome
		ca             = domain.Cancelled
	)
	var (
		awaiting, inProgress = nc(domain.RefusedAwaitingApproval), nc(domain.RefusedInProgress)
		done, later          = nc(domain.RefusedCompleted), nc(domain.RefusedRetryLater)
		handedOff, cancelled = nc(domain.RefusedHandedOff), nc(domain.RefusedCancelled)
	)
	return map[string][]want{
		// columns: awaiting_approval, received, processing, action_pending,
		// completed, failed_retryable, failed_terminal, unknown_outcome, cancelled
		"claim":             {awaiting, to(pr), inProgress, inProgress, done, to(pr), handedOff, handedOff, cancelled},
		"claim/retry_later": {awaiting, to(pr), inProgress, inProgress, done, later, handedOff, handedOff, cancelled},
		// claim.begin: the lease and the begin in one change, from wherever
		// a claim is granted; refused wherever a claim is.
		"claim+begin":             {awaiting, to(ap), inProgress, inProgress, done, to(ap), handedOff, handedOff, cancelled},
		"claim+begin/retry_later": {awaiting, to(ap), inProgress, inProgress, done, later, handedOff, handedOff, cancelled},

		"heartbeat":               onlyIn(stale, map[domain.State]want{pr: same, ap: same}),
		"heartbeat/old_token":     allStates(stale),
		"heartbeat/expired_lease": allStates(stale),
		"begin":                   onlyIn(stale, map[domain.State]want{pr: to(ap), ap: repeat}),
		"begin/old_token":         allStates(stale),
		"begin/expired_lease":     allStates(stale),
		"settle/completed":        onlyIn(stale, map[domain.State]want{pr: invalid, ap: to(co)}),
		"settle/failed_retryable": onlyIn(stale, map[domain.State]want{pr: to(fr), ap: to(fr)}),
		"settle/failed_terminal":  onlyIn(stale, map[domain.State]want{pr: to(ft), ap: to(ft)}),
		"settle/unknown_outcome":  onlyIn(stale, map[domain.State]want{pr: to(fr), ap: to(uo)}),
		"settle/completed_no_ref": onlyIn(stale, map[domain.State]want{pr: invalid, ap: badInput}),
		"settle/old_token":        allStates(stale),
		"settle/future_token":     allStates(stale),
		"settle/expired_lease":    allStates(stale),

		"reconcile/found":                      onlyIn(invalid, map[domain.State]want{uo: to(co)}),
		"reconcile/found_no_ref":               onlyIn(invalid, map[domain.State]want{uo: badInput}),
		"reconcile/not_found_authoritative":    onlyIn(invalid, map[domain.State]want{uo: to(fr)}),
		"reconcile/not_found_inconclusive":     onlyIn(invalid, map[domain.State]want{uo: same}),
		"expire_lease":                         onlyIn(invalid, map[domain.State]want{pr: to(rc), ap: to(uo)}),
		"expire_lease/live":                    allStates(invalid),
		"exhaust":                              onlyIn(invalid, map[domain.State]want{fr: to(ft)}),
		"exhaust/not_due":                      allStates(invalid),
		"approve":                              onlyIn(invalid, map[domain.State]want{aa: to(rc)}),
		"approve/own_revision":                 onlyIn(invalid, map[domain.State]want{aa: forbidden}),
		"approve/old_content_version":          onlyIn(invalid, map[domain.State]want{aa: conflict}),
		"approve/stale_expected_version":       allStates(conflict),
		"reject":                               onlyIn(invalid, map[domain.State]want{aa: to(ca)}),
		"reject/own_revision":                  onlyIn(invalid, map[domain.State]want{aa: forbidden}),
		"resolve/confirm_executed":             onlyIn(invalid, map[domain.State]want{uo: to(co)}),
		"resolve/confirm_executed_no_ref":      onlyIn(invalid, map[domain.State]want{uo: badInput}),
		"resolve/confirm_not_executed_no_then": onlyIn(invalid, map[domain.State]want{uo: badInput}),
		"resolve/confirm_not_executed+retry":   onlyIn(invalid, map[domain.State]want{uo: to(rc)}),
		"resolve/confirm_not_executed+cancel":  onlyIn(invalid, map[domain.State]want{uo: to(ca)}),
		"resolve/retry":                        onlyIn(invalid, map[domain.State]want{ft: to(rc)}),
		"resolve/cancel":                       onlyIn(invalid, map[domain.State]want{ft: to(ca)}), // unknown_outcome: confirm first
		"resolve/stale_expected_version":       allStates(conflict),
		// Only from unknown_outcome, and only while the provider still
		// deduplicates the key (sent at t0-5m).
		"resolve/resend_same_key":                  onlyIn(invalid, map[domain.State]want{uo: to(fr)}),
		"resolve/resend_same_key/no_dedup":         allStates(invalid),
		"resolve/resend_same_key/retention_closed": allStates(invalid),
		"assign":                        onlyIn(same, map[domain.State]want{co: invalid, ca: invalid}),
		"assign/stale_expected_version": allStates(conflict),
		// A note changes nothing but the timeline, so it is accepted even on
		// the final states (see the report: PRODUCT.md only says the states
		// are final).
		"note":                          allStates(same),
		"note/stale_expected_version":   allStates(conflict),
		"revise":                        onlyIn(invalid, map[domain.State]want{aa: to(aa), rc: to(aa), fr: to(aa), ft: to(aa)}),
		"revise/stale_expected_version": allStates(conflict),
	}
}

func TestDecide(t *testing.T) {
	cells := matrix()
	cmds := commands()
	seen := map[string]bool{}
	for _, c := range cmds {
		if seen[c.name] {
			t.Fatalf("command %s is listed twice", c.name)
		}
		seen[c.name] = true
		if len(cells[c.name]) != len(domain.States) {
			t.Fatalf("command %s has %d expectations, want one per state (%d)", c.name, len(cells[c.name]), len(domain.States))
		}
	}
	for name := range cells {
		if !seen[name] {
			t.Fatalf("expectation row %s has no command", name)
		}
	}
	for i, s := range domain.States {
		t.Run(s.String(), func(t *testing.T) {
			for _, c := range cmds {
				t.Run(c.name, func(t *testing.T) { runCell(t, s, c, cells[c.name][i]) })
			}
		})
	}
}

func runCell(t *testing.T, s domain.State, c command, w want) {
	card := testCard()
	if c.card != nil {
		c.card(&card)
	}
	at := t0
	if !c.at.IsZero() {
		at = c.at
	}
	actor := workflow
	if c.actor.Kind != (domain.ActorKind{}) {
		actor = c.actor
	}
	env := newEnv(card, at, actor)
	op := fixture(s)
	ch, err := domain.Decide(op, c.build(op), env)
	if !reflect.DeepEqual(op, fixture(s)) {
		t.Fatalf("Decide modified the operation it was given")
	}
	if !w.accepted() {
		if err == nil {
			t.Fatalf("accepted into %s, want refused with %s", ch.Op.State, w.code)
		}
		if got := domain.ErrorCode(err); got != w.code {
			t.Fatalf("refused with %s (%v), want %s", got, err, w.code)
		}
		e := domain.AsError(err)
		if e.Reason != w.reason {
			t.Fatalf("reason = %q, want %q", e.Reason, w.reason)
		}
		if w.reason == domain.RefusedRetryLater && e.RetryAfterSeconds != 30 { // next retry at t0-1s, now t0-30s
			t.Fatalf("retry_after_seconds = %d, want 30", e.RetryAfterSeconds)
		}
		if (w.code == domain.ENotClaimable || w.code == domain.EVersionConflict) && e.Operation == nil {
			t.Fatalf("%s error does not carry the current operation", w.code)
		}
		return
	}
	if err != nil {
		t.Fatalf("refused (%v), want accepted", err)
	}
	if w.repeat {
		if !ch.Unchanged || len(ch.Events) != 0 || ch.Op.Version != op.Version {
			t.Fatalf("a repeat must change nothing: unchanged=%v events=%d version=%d", ch.Unchanged, len(ch.Events), ch.Op.Version)
		}
		return
	}
	if ch.Unchanged {
		t.Fatalf("change marked unchanged")
	}
	if got := ch.Op.State; got != w.state(s) {
		t.Fatalf("state = %s, want %s", got, w.state(s))
	}
	checkAccepted(t, op, ch, env)
	if c.check != nil {
		c.check(t, op, ch, env)
	}
}

// checkAccepted holds for every accepted change of an existing operation.
func checkAccepted(t *testing.T, before domain.Operation, ch domain.Change, env domain.Env) {
	t.Helper()
	checkAudit(t, before.AuditHead, before.Version, before.State.String(), ch)
	n := ch.Op
	if n.Version != before.Version+1 || len(ch.Events) != 1 {
		t.Fatalf("version %d → %d with %d events, want +1 with one event", before.Version, n.Version, len(ch.Events))
	}
	ev := ch.Events[0]
	if !reflect.DeepEqual(ev.Actor, env.Actor) || !ev.At.Equal(env.Now) || ev.RequestID != env.RequestID || ev.ClientAddr != env.ClientAddr {
		t.Fatalf("event actor/at/request not stamped from env: %+v", ev)
	}
	if !n.UpdatedAt.Equal(env.Now) {
		t.Fatalf("UpdatedAt = %s, want now", n.UpdatedAt)
	}
	if n.ID != before.ID || n.Key != before.Key || n.Namespace != before.Namespace || n.Type != before.Type ||
		n.Fingerprint != before.Fingerprint || n.ProviderKey != before.ProviderKey || !n.CreatedAt.Equal(before.CreatedAt) {
		t.Fatalf("identity fields changed")
	}
	if n.LeaseToken < before.LeaseToken {
		t.Fatalf("lease token went back from %d to %d", before.LeaseToken, n.LeaseToken)
	}
	if n.State.Leased() != (n.Lease != nil) || (n.Lease != nil && n.Lease.Token != n.LeaseToken) {
		t.Fatalf("state %s with lease %+v (last token %d)", n.State, n.Lease, n.LeaseToken)
	}
	if n.ContentSHA256 != domain.SHA256Hex(n.Content) {
		t.Fatalf("ContentSHA256 does not match Content")
	}
	if n.State != domain.Completed && !reflect.DeepEqual(n.Result, before.Result) {
		t.Fatalf("result changed without completing: %+v", n.Result)
	}
}

// TestHumanRetryNeedsApprovalOfARevision: a person's retry reopens the
// operation only with an approved snapshot (invariant 7).
func TestHumanRetryNeedsApprovalOfARevision(t *testing.T) {
	for _, tt := range []struct {
		name     string
		requires bool
		version  int
		approval *domain.Approval
		want     domain.State
	}{
		{"registered_content", false, 1, nil, domain.Received},
		{"type_requires_approval_never_given", true, 1, nil, domain.AwaitingApproval},
		{"type_requires_approval_given", true, 1, &domain.Approval{ContentVersion: 1, By: bob.Identity()}, domain.Received},
		{"revised_not_approved", false, 2, nil, domain.AwaitingApproval},
		{"revised_and_approved", false, 2, &domain.Approval{ContentVersion: 2, By: bob.Identity()}, domain.Received},
	} {
		t.Run(tt.name, func(t *testing.T) {
			card := testCard()
			card.RequiresApproval = tt.requires
			for _, r := range []domain.Resolve{
				{Action: domain.ResolveRetry, Reason: "fixed"},
				{Action: domain.ResolveConfirmNotExecuted, Then: domain.ResolveRetry, Reason: "not in the CRM"},
			} {
				op := fixture(domain.FailedTerminal)
				if r.Action == domain.ResolveConfirmNotExecuted {
					op = fixture(domain.UnknownOutcome)
				}
				op.ContentVersion, op.Approval = tt.version, tt.approval
				ch, err := domain.Decide(op, r, newEnv(card, t0, alice))
				if err != nil || ch.Op.State != tt.want {
					t.Fatalf("%s from %s → %s (%v), want %s", r.Action, op.State, ch.Op.State, err, tt.want)
				}
			}
		})
	}
}
