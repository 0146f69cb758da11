package domain_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/opshandoff/handoff/domain"
	"pgregory.net/rapid"
)

// The actions of TestMachine. Each applies what is due, sends one command and
// checks the answer against what PRODUCT.md and API.md say it must be.

func refusedWith(t *rapid.T, err error, code domain.Code, what string) {
	t.Helper()
	if got := domain.ErrorCode(err); err == nil || got != code {
		t.Fatalf("%s: got %v, want %s", what, err, code)
	}
}

func accepted(t *rapid.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s refused: %v", what, err)
	}
}

func (m *machine) claim(t *rapid.T) {
	m.catchUp(t)
	c := domain.Claim{Worker: rapid.SampledFrom(workers).Draw(t, "worker"),
		Lease: rapid.SampledFrom([]time.Duration{0, 5 * time.Second, time.Minute}).Draw(t, "lease"),
		Begin: rapid.Bool().Draw(t, "begin")}
	before, ch, err := m.do(t, workflow, c)
	reason := map[domain.State]domain.ClaimRefusal{domain.AwaitingApproval: domain.RefusedAwaitingApproval,
		domain.Processing: domain.RefusedInProgress, domain.ActionPending: domain.RefusedInProgress,
		domain.Completed: domain.RefusedCompleted, domain.Cancelled: domain.RefusedCancelled,
		domain.FailedTerminal: domain.RefusedHandedOff, domain.UnknownOutcome: domain.RefusedHandedOff}[before.State]
	if before.State == domain.FailedRetryable && before.NextRetryAt != nil && m.now.Before(*before.NextRetryAt) {
		reason = domain.RefusedRetryLater
	}
	if !reason.IsZero() {
		refusedWith(t, err, domain.ENotClaimable, "claim in "+before.State.String())
		if got := domain.AsError(err).Reason; got != reason {
			t.Fatalf("claim in %s refused as %s, want %s", before.State, got, reason)
		}
		return
	}
	accepted(t, err, "claim in "+before.State.String())
	if l := ch.Op.Lease; ch.Op.State != claimedState(c) || l.Worker != c.Worker || !l.ExpiresAt.Equal(m.leaseExpires) {
		t.Fatalf("claimed into %s with lease %+v", ch.Op.State, l)
	}
}

// drawToken picks the live fencing token, an older one, one never issued or none.
func (m *machine) drawToken(t *rapid.T) int64 {
	switch rapid.SampledFrom([]string{"live", "live", "live", "old", "next", "none"}).Draw(t, "token") {
	case "live":
		return m.op.LeaseToken
	case "old":
		if len(m.tokens) > 1 {
			return rapid.SampledFrom(m.tokens[:len(m.tokens)-1]).Draw(t, "old_token")
		}
	case "next":
		return m.op.LeaseToken + 1
	}
	return 0
}

// holds reports whether token is the live lease of op (Due has already
// ended an expired one).
func holds(op domain.Operation, token int64) bool {
	return op.State.Leased() && token == op.LeaseToken
}

func (m *machine) heartbeat(t *rapid.T) {
	m.catchUp(t)
	h := domain.Heartbeat{LeaseToken: m.drawToken(t), Lease: rapid.SampledFrom([]time.Duration{0, 20 * time.Second}).Draw(t, "lease")}
	before, ch, err := m.do(t, workflow, h)
	if !holds(before, h.LeaseToken) {
		refusedWith(t, err, domain.EStaleLease, fmt.Sprintf("heartbeat %d in %s (live %d)", h.LeaseToken, before.State, before.LeaseToken))
		return
	}
	accepted(t, err, "heartbeat")
	m.leaseExpires = m.now.Add(orDefault(h.Lease, m.card.Lease))
	if ch.Op.State != before.State || !ch.Op.Lease.ExpiresAt.Equal(m.leaseExpires) {
		t.Fatalf("heartbeat: %s lease %+v", ch.Op.State, ch.Op.Lease)
	}
}

func (m *machine) begin(t *rapid.T) {
	m.catchUp(t)
	b := domain.Begin{LeaseToken: m.drawToken(t)}
	before, ch, err := m.do(t, workflow, b)
	switch {
	case !holds(before, b.LeaseToken):
		refusedWith(t, err, domain.EStaleLease, fmt.Sprintf("begin %d in %s (live %d)", b.LeaseToken, before.State, before.LeaseToken))
	case before.State == domain.ActionPending:
		accepted(t, err, "repeated begin")
		if !ch.Unchanged {
			t.Fatalf("a repeated begin must change nothing")
		}
	default:
		accepted(t, err, "begin")
		if ch.Op.State != domain.ActionPending || !timesEqual(ch.Op.ProviderKeyFirstSentAt, m.firstSent) {
			t.Fatalf("begin: %s, first sent %v", ch.Op.State, ch.Op.ProviderKeyFirstSentAt)
		}
	}
}

// resultData are result data a completion may report: the second is the
// first with its members in another order.
var resultData = []string{"", `{"id":7,"tags":["a","b"]}`, `{ "tags": ["a","b"], "id": 7 }`, `{"id":8}`}

// resettle sends again, with a token of the past, either the settle that
// ended that token's attempt (reworded where wording does not count) or
// one that differs from it in what it asks. Invariant 15: only the first
// is a replay; Decide refuses both as a stale lease, and the Ledger asks
// SettleReplays which of the two it was.
func (m *machine) resettle(t *rapid.T) {
	if len(m.tokens) == 0 {
		t.Skip("no token issued yet")
	}
	token := rapid.SampledFrom(m.tokens).Draw(t, "resettle_token")
	first, settled := m.settles[token]
	s := domain.Settle{LeaseToken: token, Outcome: domain.OutcomeFailedRetryable,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Code: "E"}}
	if settled {
		s = first
		if s.Result != nil {
			r := *s.Result
			s.Result = &r
		}
		if s.Error != nil {
			e := *s.Error
			s.Error = &e
		}
		switch rapid.SampledFrom([]string{"same", "other_ref", "other_data", "other_outcome", "other_class", "other_code"}).Draw(t, "resettle_as") {
		case "same":
			if s.Error != nil {
				s.Error.Message = "worded otherwise"
			}
			s.RetryAfter = 0
			if s.Result != nil && string(s.Result.Data) == resultData[1] {
				s.Result.Data = json.RawMessage(resultData[2])
			}
		case "other_ref":
			if s.Result != nil {
				s.Result.Ref += "-x"
			}
		case "other_data":
			if s.Result != nil {
				s.Result.Data = json.RawMessage(resultData[3])
			}
		case "other_outcome":
			if s.Outcome == domain.OutcomeCompleted {
				s.Outcome, s.Result = domain.OutcomeUnknown, nil
			} else {
				s.Outcome, s.Result, s.Error = domain.OutcomeCompleted, &domain.Result{Ref: "ref-other"}, nil
			}
		case "other_class":
			if s.Outcome != domain.OutcomeCompleted {
				s.Error = &domain.ErrorInfo{Class: domain.ClassConflict, Code: "E"}
				if errClass(first) == domain.ClassConflict {
					s.Error.Class = domain.ClassAuth
				}
			}
		case "other_code":
			if s.Outcome != domain.OutcomeCompleted {
				s.Error = &domain.ErrorInfo{Class: errClass(first), Code: "E2"}
			}
		}
	}
	if holds(m.op, token) {
		return // the live lease: an ordinary settle, not a repeat
	}
	_, _, err := m.do(t, workflow, s)
	refusedWith(t, err, domain.EStaleLease, fmt.Sprintf("settle again with token %d in %s", token, m.op.State))
	i := slices.IndexFunc(m.attempts, func(a domain.Attempt) bool { return a.LeaseToken == token })
	if i < 0 {
		t.Fatalf("no attempt has token %d", token)
	}
	want := settled && sameSettle(first, s)
	if got := domain.SettleReplays(m.op, m.attempts[i], s); got != want {
		t.Fatalf("settle %+v (result %+v) after %+v (result %+v), attempt %+v: replay %v, want %v",
			s, s.Result, first, first.Result, m.attempts[i], got, want)
	}
}

// sameSettle is the model's own answer to "is b the settle a again": the
// same outcome and, for completed, the same result ref and data (as JSON
// values), otherwise the same error class and code.
func sameSettle(a, b domain.Settle) bool {
	if a.Outcome != b.Outcome {
		return false
	}
	if a.Outcome == domain.OutcomeCompleted {
		return a.Result.Ref == b.Result.Ref && jsonEqual(a.Result.Data, b.Result.Data)
	}
	code := func(s domain.Settle) string {
		if s.Error == nil {
			return ""
		}
		return s.Error.Code
	}
	return errClass(a) == errClass(b) && code(a) == code(b)
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// Failures first: rapid favours the front of a list, and a completion ends the run.
var (
	settleOutcomes = []domain.Outcome{domain.OutcomeFailedRetryable, domain.OutcomeUnknown,
		domain.OutcomeCompleted, domain.OutcomeFailedTerminal}
	settleClasses = append([]domain.ErrorClass{domain.ClassTimeout, domain.ClassRateLimited, {}}, domain.ErrorClasses...)
)

func (m *machine) settle(t *rapid.T) {
	m.catchUp(t)
	s := domain.Settle{LeaseToken: m.drawToken(t), Outcome: rapid.SampledFrom(settleOutcomes).Draw(t, "outcome"),
		RetryAfter: rapid.SampledFrom([]time.Duration{0, 5 * time.Second, 10 * time.Minute}).Draw(t, "retry_after")}
	if s.Outcome == domain.OutcomeCompleted {
		s.Result = &domain.Result{Ref: fmt.Sprintf("ref-%d", len(m.history))}
		if d := rapid.SampledFrom(resultData).Draw(t, "result_data"); d != "" {
			s.Result.Data = json.RawMessage(d)
		}
	} else {
		if c := rapid.SampledFrom(settleClasses).Draw(t, "class"); !c.IsZero() {
			s.Error = &domain.ErrorInfo{Class: c, Code: "E", Message: "provider said so"}
		}
		if rapid.IntRange(0, 3).Draw(t, "failure_with_result") == 0 {
			// The API takes a result with any outcome; a failure keeps none.
			s.Result = &domain.Result{Ref: fmt.Sprintf("partial-%d", len(m.history))}
		}
	}
	class := errClass(s)
	exhausted := m.budget >= m.card.Retry.MaxAttempts || m.elapsedExhausted()
	before, ch, err := m.do(t, workflow, s)
	if !holds(before, s.LeaseToken) {
		refusedWith(t, err, domain.EStaleLease, fmt.Sprintf("settle %d in %s (live %d)", s.LeaseToken, before.State, before.LeaseToken))
		return
	}
	if s.Outcome == domain.OutcomeCompleted && before.State != domain.ActionPending {
		refusedWith(t, err, domain.EInvalidTransition, "completed before begin")
		return
	}
	accepted(t, err, "settle")
	m.settles[s.LeaseToken] = s
	n := ch.Op
	what := fmt.Sprintf("settle %s/%s in %s → %s (%+v)", s.Outcome, class, before.State, n.State, n.LastError)
	if n.Lease != nil {
		t.Fatalf("%s kept the lease", what)
	}
	var want domain.State // zero: failed_retryable, or failed_terminal once exhausted
	switch {
	case s.Outcome == domain.OutcomeCompleted:
		want = domain.Completed
	case before.State == domain.ActionPending && (s.Outcome == domain.OutcomeUnknown || class.LeavesDoubt()):
		// invariant 4: doubt after begin, whatever the card calls the class;
		// a guarded resend that runs out of retries is still a doubt
		if !m.autoResendAt(m.now) || exhausted {
			want = domain.UnknownOutcome
		} else {
			want = domain.FailedRetryable
		}
	case m.card.IsTerminal(class): // invariant 4: the card's terminal classes
		want = domain.FailedTerminal
	case s.Outcome == domain.OutcomeFailedTerminal:
		want = domain.FailedTerminal
	case n.State == domain.FailedTerminal && n.LastError.Code == "not_retryable":
		// a class the card does not retry, before anything was sent or proven harmless
		if m.card.IsRetryable(class) || class.LeavesDoubt() {
			t.Fatalf("%s: the card retries this class", what)
		}
		want = domain.FailedTerminal
	}
	switch {
	case !want.IsZero() && n.State != want:
		t.Fatalf("%s, want %s", what, want)
	case want.IsZero() && m.retryRefusal() != "" && (n.State != domain.FailedTerminal || n.LastError.Code != m.retryRefusal() || n.NextRetryAt != nil):
		// invariant 8: the worker's SDK (or nobody) retries, never Handoff on top
		t.Fatalf("%s, want failed_terminal with %s and no retry", what, m.retryRefusal())
	case want.IsZero() && m.retryRefusal() != "":
	case want.IsZero() && exhausted && (n.State != domain.FailedTerminal || n.LastError.Code != "retries_exhausted"):
		t.Fatalf("%s, want failed_terminal with retries_exhausted", what)
	case want.IsZero() && !exhausted && n.State != domain.FailedRetryable:
		t.Fatalf("%s, want failed_retryable", what)
	}
	if n.State == domain.FailedRetryable {
		if r := n.NextRetryAt; r == nil || r.Before(m.now.Add(s.RetryAfter)) || r.After(m.now.Add(max(s.RetryAfter, m.card.Retry.BackoffMax))) {
			t.Fatalf("%s: next retry at %v", what, r)
		}
	}
	if n.State != domain.Completed && n.LastError.Class != class {
		t.Fatalf("%s: last error class %s, want %s", what, n.LastError.Class, class)
	}
}

func (m *machine) reconcile(t *rapid.T) {
	m.catchUp(t)
	r := domain.Reconcile{Found: rapid.Bool().Draw(t, "found"), Evidence: "GET /tasks?external_id=…"}
	if r.Found {
		r.Result = &domain.Result{Ref: "crm-found"}
	}
	r.CallBeganAt = m.lastBegan // as the Ledger reads it from the attempts
	early := !r.Found && m.lastBegan != nil && m.now.Before(m.card.NotFoundFrom(*m.lastBegan))
	m.judgeLookup(t)
	exhausted := m.budget >= m.card.Retry.MaxAttempts || m.elapsedExhausted()
	before, ch, err := m.do(t, workflow, r)
	if before.State != domain.UnknownOutcome {
		refusedWith(t, err, domain.EInvalidTransition, "reconcile in "+before.State.String())
		return
	}
	accepted(t, err, "reconcile")
	want := domain.UnknownOutcome // not found, and the lookup cannot prove it
	switch {
	case r.Found:
		want = domain.Completed
	case early: // the call may still land: not proof yet (invariant 13)
	case m.card.LookupAuthoritative && (exhausted || m.retryRefusal() != ""):
		want = domain.FailedTerminal
	case m.card.LookupAuthoritative:
		want = domain.FailedRetryable
	}
	if ch.Op.State != want {
		t.Fatalf("reconcile found=%v authoritative=%v → %s, want %s", r.Found, m.card.LookupAuthoritative, ch.Op.State, want)
	}
}

// drawSeen is the expected_version a person sends: the one on screen, an
// older one, or none.
func (m *machine) drawSeen(t *rapid.T) (v int64, stale bool) {
	switch rapid.SampledFrom([]string{"current", "current", "current", "stale", "none"}).Draw(t, "expected_version") {
	case "current":
		return m.op.Version, false
	case "stale":
		return m.op.Version - 1, m.op.Version > 1
	}
	return 0, false
}

func (m *machine) resolve(t *rapid.T) {
	m.catchUp(t)
	r := domain.Resolve{Action: rapid.SampledFrom(domain.ResolveActions).Draw(t, "action"), Then: domain.ResolveRetry,
		Result: &domain.Result{Ref: "desk-ref"}, Reason: "checked at the provider"}
	if rapid.IntRange(0, 3).Draw(t, "then_cancel") == 0 {
		r.Then = domain.ResolveCancel
	}
	var stale bool
	r.ExpectedVersion, stale = m.drawSeen(t)
	reopen := domain.Received
	if m.runnable == nil {
		reopen = domain.AwaitingApproval // a revised or unapproved snapshot needs approval first
	}
	before, ch, err := m.do(t, rapid.SampledFrom(people).Draw(t, "person"), r)
	var want domain.State
	switch st, a := before.State, r.Action; {
	case stale:
		refusedWith(t, err, domain.EVersionConflict, "resolve with a stale version")
		return
	case st == domain.UnknownOutcome && a == domain.ResolveConfirmExecuted:
		want = domain.Completed
	case st == domain.UnknownOutcome && a == domain.ResolveConfirmNotExecuted && r.Then == domain.ResolveRetry,
		st == domain.FailedTerminal && a == domain.ResolveRetry:
		want = reopen
	case st == domain.UnknownOutcome && a == domain.ResolveConfirmNotExecuted,
		st == domain.FailedTerminal && a == domain.ResolveCancel:
		want = domain.Cancelled
	case st == domain.UnknownOutcome && a == domain.ResolveResendSameKey && m.resendSafe() && m.keyContent[before.ProviderKey] == before.ContentSHA256:
		// Due now, guarded by the key's retention — only for the content the
		// key was sent with: a revision held since goes out under a new key
		// (invariant 9).
		want = domain.FailedRetryable
	default:
		refusedWith(t, err, domain.EInvalidTransition, fmt.Sprintf("resolve %s in %s", a, st))
		return
	}
	accepted(t, err, "resolve")
	if ch.Op.State != want {
		t.Fatalf("resolve %s+%s in %s → %s, want %s", r.Action, r.Then, before.State, ch.Op.State, want)
	}
	if a := r.Action; a == domain.ResolveResendSameKey && (ch.Op.LastError == nil || ch.Op.LastError.Code != domain.CodeResendGuarded ||
		ch.Op.NextRetryAt == nil || ch.Op.NextRetryAt.After(m.now) || ch.Op.ProviderKey != before.ProviderKey) {
		t.Fatalf("resend_same_key left error %+v, next retry %v, provider key %q", ch.Op.LastError, ch.Op.NextRetryAt, ch.Op.ProviderKey)
	}
}

func (m *machine) assignOrNote(t *rapid.T) {
	m.catchUp(t)
	p := rapid.SampledFrom(people).Draw(t, "person")
	seen, stale := m.drawSeen(t)
	var cmd domain.Command = domain.Note{Text: "called the provider", ExpectedVersion: seen}
	isNote := rapid.Bool().Draw(t, "note")
	to := rapid.SampledFrom([]domain.Person{{}, bob.Person()}).Draw(t, "assignee")
	if !isNote {
		cmd = domain.Assign{To: to, Reason: "mine", ExpectedVersion: seen}
	}
	before, ch, err := m.do(t, p, cmd)
	switch {
	case stale:
		refusedWith(t, err, domain.EVersionConflict, "assign/note with a stale version")
	case !isNote && before.State.Final():
		refusedWith(t, err, domain.EInvalidTransition, "assign on a final operation")
	default:
		accepted(t, err, "assign/note")
		if ch.Op.State != before.State {
			t.Fatalf("assign/note moved %s to %s", before.State, ch.Op.State)
		}
		if n := ch.Op; !isNote && (n.AssigneeIssuer != to.Issuer || n.AssigneeSubject != to.Subject ||
			n.Assignee != to.Identity() || n.AssignedTo(bob) != (to.Subject != "")) {
			t.Fatalf("assigned to %q (%s %s), want %+v", n.Assignee, n.AssigneeIssuer, n.AssigneeSubject, to)
		}
	}
}

func (m *machine) revise(t *rapid.T) {
	m.catchUp(t)
	p := rapid.SampledFrom(people).Draw(t, "author")
	content := []byte(fmt.Sprintf(`{"owner":"u_%d"}`, rapid.IntRange(1, 99).Draw(t, "owner")))
	before, ch, err := m.do(t, p, domain.Revise{Content: content, Reason: "fix owner", ExpectedVersion: m.op.Version})
	switch before.State {
	case domain.Received, domain.FailedRetryable, domain.FailedTerminal, domain.AwaitingApproval:
		accepted(t, err, "revise in "+before.State.String())
		n := ch.Op
		if n.State != domain.AwaitingApproval || n.ContentVersion != before.ContentVersion+1 || !bytes.Equal(n.Content, content) ||
			n.ContentAuthor != p.Identity() || n.Approval != nil {
			t.Fatalf("revise: %s v%d by %q approval %+v", n.State, n.ContentVersion, n.ContentAuthor, n.Approval)
		}
	default:
		refusedWith(t, err, domain.EInvalidTransition, "revise in "+before.State.String())
	}
}

// approval: a person approves (or now and then rejects) the current or an
// older content version — sometimes the very person who wrote it.
func (m *machine) approval(t *rapid.T) {
	m.catchUp(t)
	p := rapid.SampledFrom([]domain.Actor{bob, carol, alice, dave}).Draw(t, "approver")
	version := m.op.ContentVersion - rapid.IntRange(0, 1).Draw(t, "older_version")
	reject := rapid.IntRange(0, 9).Draw(t, "reject") == 0
	var cmd domain.Command = domain.Approve{ContentVersion: version, Reason: "ok", ExpectedVersion: m.op.Version}
	want := domain.Received
	if reject {
		cmd, want = domain.Reject{ContentVersion: version, Reason: "no", ExpectedVersion: m.op.Version}, domain.Cancelled
	}
	before, ch, err := m.do(t, p, cmd)
	switch {
	case before.State != domain.AwaitingApproval:
		refusedWith(t, err, domain.EInvalidTransition, "approval in "+before.State.String())
	case version != before.ContentVersion:
		refusedWith(t, err, domain.EVersionConflict, "approval of an older content version")
	case p.Identity() == before.ContentAuthor: // four eyes
		refusedWith(t, err, domain.EForbidden, "approval by the author")
	default:
		accepted(t, err, "approval")
		if !reject && m.spentInDoubt(before) {
			// invariant 9: the revision waits until a person knows whether
			// the earlier content, sent under the old key, executed
			want = domain.UnknownOutcome
		}
		if ch.Op.State != want {
			t.Fatalf("approval → %s, want %s", ch.Op.State, want)
		}
	}
}

// spentInDoubt reports, as the model sees it, whether op's provider key was
// sent with another content version on a provider that remembers keys,
// and that send may have executed.
func (m *machine) spentInDoubt(op domain.Operation) bool {
	spent := op.ProviderKeyFirstSentAt != nil && op.ProviderKeySentVersion != op.ContentVersion &&
		m.card.ProviderIdempotency != domain.IdempotencyNone
	e := op.LastError
	return spent && e != nil && (e.Code == domain.CodeResendGuarded || e.Code == "retention_expired" || e.Class.LeavesDoubt())
}

// judgeLookup asks JudgeLookupCall about Handoff's own lookups of the last
// call, on the card with an adapter: an authoritative not-found may
// conclude only once the call's deadline and the window after it have
// passed (invariant 13); one before is looked at again, at the latest then.
func (m *machine) judgeLookup(t *rapid.T) {
	if m.lastBegan == nil {
		return
	}
	card := m.card
	card.LookupAdapter = &domain.LookupAdapter{Window: rapid.SampledFrom([]time.Duration{0, time.Minute, 5 * time.Second}).Draw(t, "window")}
	started := m.lastBegan.Add(rapid.SampledFrom([]time.Duration{card.Lease, 0, time.Second, 3 * time.Minute}).Draw(t, "lookup_started"))
	if started.After(m.now) {
		started = m.now
	}
	results := []domain.LookupResult{domain.LookupNotFound, domain.LookupError, domain.LookupUnsure, domain.LookupFoundDone}
	tries := []domain.LookupTry{{At: m.now, Result: rapid.SampledFrom(results).Draw(t, "lookup_result")}}
	v := domain.JudgeLookupCall(card, tries, started, *m.lastBegan, m.now, 5*time.Second)
	from := card.NotFoundFrom(*m.lastBegan)
	switch {
	case v.Done && v.Conclusion == domain.ConcludedNotFound && m.now.Before(from):
		t.Fatalf("a not-found at %v concluded before the call's deadline and window %v (invariant 13)", m.now, from)
	case !v.Done && v.Next.After(maxTime(from, started.Add(card.LookupAdapter.Window))):
		t.Fatalf("a lookup looks again at %v, after the deadline %v and the window", v.Next, from)
	case !v.Done && !v.Next.After(m.now):
		t.Fatalf("a lookup not concluded looks again at %v, not after now %v", v.Next, m.now)
	case v.Done && tries[0].Result == domain.LookupNotFound && card.LookupAuthoritative && v.Conclusion != domain.ConcludedNotFound:
		t.Fatalf("an authoritative not-found after the deadline concluded %s", v.Conclusion)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
