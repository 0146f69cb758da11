package domain_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"pgregory.net/rapid"
)

// TestMachine drives one operation, under a random retry card, through random
// commands from random actors — workflows holding the live or an old fencing
// token, the system after the clock moved, people (including the author of a
// revision trying to approve it) — applying domain.Due first as the Ledger
// does, and checks PRODUCT.md's invariants after every step.
//
// Invariant 1 (one key, one operation under concurrent registrations) is a
// property of the store and is tested there, on PostgreSQL; the pure
// function only ever sees one operation. Roles are checked by the Ledger
// (requirePerson), not by Decide, so people here differ only in identity.
func TestMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := newMachine(t)
		// Weighted, and named so that the worker protocol sorts first: rapid
		// favours the front of the sorted action names.
		actions := map[string]func(*rapid.T){"": m.check}
		n := 0
		for _, a := range []struct {
			name   string
			weight int
			do     func(*rapid.T)
		}{
			{"claim", 3, m.claim}, {"begin", 3, m.begin}, {"settle", 4, m.settle}, {"advance", 2, m.advance},
			{"resolve", 2, m.resolve}, {"reconcile", 2, m.reconcile}, {"approval", 2, m.approval},
			{"heartbeat", 1, m.heartbeat}, {"sweep", 1, func(t *rapid.T) { m.catchUp(t) }},
			{"revise", 1, m.revise}, {"assign_or_note", 1, m.assignOrNote}, {"resettle", 2, m.resettle},
		} {
			for range a.weight {
				n++
				actions[fmt.Sprintf("%02d_%s", n, a.name)] = a.do
			}
		}
		t.Repeat(actions)
	})
}

// machine is the model. history is the "store": the list of changes that
// were written, in order — not a mock of any database.
type machine struct {
	card    domain.Card
	now     time.Time
	history []domain.Change
	op      domain.Operation
	first   domain.Operation // as registered

	tokens       []int64    // every fencing token issued, in order (invariant 2)
	leaseExpires time.Time  // of the live lease, as the model computes it
	sent         bool       // reached action_pending, and nothing since proved a re-send safe (invariant 3)
	firstSent    *time.Time // first begin: the provider key's retention starts here
	lastBegan    *time.Time // the last begin: its call may land until the card's call deadline (invariant 13)
	final        domain.State
	runnable     []byte                  // the approved snapshot a worker may run; nil while one awaits approval (invariant 7)
	budget       int                     // claims since registration or a person's retry
	firstAttempt *time.Time              // the first of them
	guarded      bool                    // retryable only under the provider's key retention
	providerKey  string                  // the current provider key; it changes only with its own event
	keyContent   map[string]string       // provider key → the content hash it was first sent with (invariant 9)
	attempts     []domain.Attempt        // as the store keeps them: each claim's, with its begin and settle merged in
	settles      map[int64]domain.Settle // lease token → the settle that ended its attempt (invariant 15)
}

var (
	workers = []string{"w-1", "w-2", "w-3"}
	people  = []domain.Actor{alice, bob, carol, dave}
)

func newMachine(t *rapid.T) *machine {
	m := &machine{card: drawCard(t), now: t0}
	r := registration()
	if rapid.Bool().Draw(t, "register_with_claim") {
		r.Claim = &domain.Claim{Worker: "w-1", Begin: rapid.Bool().Draw(t, "claim_begin")}
	}
	loop := rapid.IntRange(0, 9).Draw(t, "loop") == 0
	ch, err := domain.NewOperation(r, []byte(fixtureContent), loop, m.env(workflow))
	if err != nil {
		t.Fatalf("NewOperation: %v", err)
	}
	if !m.card.RequiresApproval {
		m.runnable = []byte(fixtureContent)
	}
	m.first, m.providerKey, m.keyContent = ch.Op, ch.Op.ProviderKey, map[string]string{}
	m.settles = map[int64]domain.Settle{}
	m.record(t, domain.Operation{}, r.Claim, ch) // from nothing: version 0, no state, no audit head
	checkRegistrationEvent(t, r, ch)
	return m
}

// checkRegistrationEvent: a registration is one change and one event; one
// that claimed is named for it and carries the claim beside the
// registration's own members.
func checkRegistrationEvent(t *rapid.T, r domain.Registration, ch domain.Change) {
	want := "registered"
	if ch.Op.State.Leased() {
		want = domain.ActionRegisteredAndClaimed
		if claimBegins(r.Claim) {
			want = domain.ActionRegisteredAndBegan
		}
	}
	if len(ch.Events) != 1 || ch.Events[0].Action != want {
		t.Fatalf("registration (claim %+v) wrote %d events, the first %s; want one, %s", r.Claim, len(ch.Events), ch.Events[0].Action, want)
	}
	var d struct {
		Fingerprint string `json:"fingerprint"`
		Worker      string `json:"worker"`
		AttemptID   string `json:"attempt_id"`
	}
	_ = json.Unmarshal(ch.Events[0].Detail, &d)
	claimed := ch.Attempt != nil
	if d.Fingerprint != ch.Op.Fingerprint || (d.Worker != "") != claimed || (claimed && (d.Worker != ch.Attempt.Attempt.Worker ||
		d.AttemptID != ch.Attempt.Attempt.ID)) {
		t.Fatalf("registration event detail %s, attempt %+v", ch.Events[0].Detail, ch.Attempt)
	}
}

func drawCard(t *rapid.T) domain.Card {
	c := testCard()
	// rapid favours the front of a list: the deeper paths come first.
	c.ProviderIdempotency = rapid.SampledFrom([]domain.ProviderIdempotency{
		domain.IdempotencyKey, domain.IdempotencyNone, domain.IdempotencyKeyAndParams, domain.IdempotencyUnknown}).Draw(t, "provider_idempotency")
	c.RetryLayer = rapid.SampledFrom([]domain.RetryLayer{domain.RetryByHandoff, domain.RetryByWorker, domain.RetryByNobody}).Draw(t, "retry_layer")
	if rapid.IntRange(0, 4).Draw(t, "unverified") == 0 {
		c.Unverified = []string{"Does the provider dedupe keys across accounts?"}
	}
	if c.ProviderIdempotency != domain.IdempotencyNone {
		c.ProviderKeyRetention = rapid.SampledFrom([]time.Duration{24 * time.Hour, time.Minute, 10 * time.Minute}).Draw(t, "retention")
	}
	c.Lookup = rapid.SampledFrom([]domain.LookupMethod{domain.LookupAPI, domain.LookupNone, domain.LookupManual}).Draw(t, "lookup")
	c.LookupAuthoritative = c.Lookup != domain.LookupNone && rapid.Bool().Draw(t, "lookup_authoritative")
	c.RequiresApproval = rapid.Bool().Draw(t, "requires_approval")
	c.Retry.MaxAttempts = rapid.SampledFrom([]int{3, 1, 2, 5}).Draw(t, "max_attempts")
	c.Retry.MaxElapsed = rapid.SampledFrom([]time.Duration{2 * time.Hour, 0, 10 * time.Minute}).Draw(t, "max_elapsed")
	c.Retry.Backoff, c.Retry.BackoffMax = time.Second, rapid.SampledFrom([]time.Duration{10 * time.Second, 5 * time.Minute}).Draw(t, "backoff_max")
	classes := rapid.Permutation(domain.ErrorClasses).Draw(t, "classes")
	nr, nt := rapid.IntRange(0, 4).Draw(t, "retryable"), rapid.IntRange(0, 4).Draw(t, "terminal")
	c.Retryable, c.Terminal = classes[:nr], classes[nr:nr+nt]
	c.Lease = rapid.SampledFrom([]time.Duration{10 * time.Second, 30 * time.Second}).Draw(t, "lease")
	c.CallTimeout = rapid.SampledFrom([]time.Duration{0, time.Minute, 30 * time.Second, 5 * time.Minute}).Draw(t, "call_timeout")
	if errs := c.Validate(); len(errs) > 0 {
		t.Fatalf("drew an invalid card: %v", errs)
	}
	return c
}

func (m *machine) env(actor domain.Actor) domain.Env { return newEnv(m.card, m.now, actor) }

func (m *machine) advance(t *rapid.T) {
	m.now = m.now.Add(rapid.SampledFrom([]time.Duration{time.Second, 3 * time.Second, 9 * time.Second, 31 * time.Second,
		2 * time.Minute, 11 * time.Minute, 2 * time.Hour, 25 * time.Hour}).Draw(t, "advance"))
}

// catchUp applies what time alone made due, as Ledger.mutate and Sweep do,
// after checking that Due asks for exactly what the model expects.
func (m *machine) catchUp(t *rapid.T) {
	due := domain.Due(m.op, m.card, m.now)
	expire := m.op.State.Leased() && !m.now.Before(m.leaseExpires)
	lapse := !expire && m.guarded && (m.op.State == domain.FailedRetryable || m.op.State == domain.Received) && !m.resendSafe()
	exhaust := !expire && !lapse && m.op.State == domain.FailedRetryable && m.elapsedExhausted()
	_, isExpire := due.(domain.ExpireLease)
	_, isExhaust := due.(domain.Exhaust)
	_, isLapse := due.(domain.LapseResend)
	if isExpire != expire || isExhaust != exhaust || isLapse != lapse || (due != nil) != (expire || exhaust || lapse) {
		t.Fatalf("Due(%s) = %#v, want expire=%v exhaust=%v lapse=%v", m.op.State, due, expire, exhaust, lapse)
	}
	if due == nil {
		return
	}
	before, now := m.op, m.now
	_, ch, err := m.do(t, domain.System, due)
	if err != nil {
		t.Fatalf("%T refused: %v", due, err)
	}
	want := map[domain.State]domain.State{domain.Processing: domain.Received, domain.ActionPending: domain.UnknownOutcome,
		domain.FailedRetryable: domain.FailedTerminal}[before.State]
	switch {
	case lapse: // the provider may have forgotten the key: a resend is no longer safe
		want = domain.UnknownOutcome
	case expire && before.State == domain.Processing && (m.budget >= m.card.Retry.MaxAttempts || m.elapsedExhausted()):
		want = domain.FailedTerminal // every worker died before begin: bounded too
	case expire && before.State == domain.ActionPending && m.autoResendAt(now) && !m.exhaustedAt(now):
		// The system policy: the provider deduplicates by key and still
		// remembers this one, so a re-send is retried rather than asked.
		want = domain.FailedRetryable
	}
	if ch.Op.State != want {
		t.Fatalf("%T in %s → %s, want %s", due, before.State, ch.Op.State, want)
	}
	if expire && before.State == domain.ActionPending {
		// The doubt is recorded first, whatever the policy then does.
		if e := ch.Events[0]; e.Action != "lease_expired" || e.ToState != domain.UnknownOutcome.String() {
			t.Fatalf("lease expiry after begin recorded as %s → %s, want lease_expired → unknown_outcome", e.Action, e.ToState)
		}
		if want == domain.FailedRetryable {
			e := ch.Events[len(ch.Events)-1]
			if len(ch.Events) != 2 || e.Action != domain.CodeResendGuarded || e.Actor.Kind != domain.ActorSystem ||
				!bytes.Contains(e.Detail, []byte(`"dedup_until":"`+m.firstSent.Add(m.card.ProviderKeyRetention).UTC().Format(time.RFC3339Nano))) ||
				ch.Op.LastError.Code != domain.CodeResendGuarded || ch.Op.NextRetryAt == nil {
				t.Fatalf("policy resend recorded as %d events, last %s by %s detail %s, error %+v", len(ch.Events), e.Action, e.Actor.Kind, e.Detail, ch.Op.LastError)
			}
		}
	}
	if exhaust && ch.Op.LastError.Code != "retries_exhausted" {
		t.Fatalf("exhausted with last error %+v", ch.Op.LastError)
	}
}

func (m *machine) elapsedExhausted() bool {
	return m.card.Retry.MaxElapsed > 0 && m.firstAttempt != nil && m.now.Sub(*m.firstAttempt) >= m.card.Retry.MaxElapsed
}

// guarded: the operation is retryable only because the provider deduplicates
// by key; the guard lapses with the key's retention.
func (m *machine) resendSafe() bool { return m.resendSafeAt(m.now) }

func (m *machine) resendSafeAt(now time.Time) bool {
	dedupes := m.card.ProviderIdempotency == domain.IdempotencyKey || m.card.ProviderIdempotency == domain.IdempotencyKeyAndParams
	return dedupes && m.firstSent != nil && now.Before(m.firstSent.Add(m.card.ProviderKeyRetention))
}

// autoResendAt is resendSafeAt for the system's own re-send: only where
// Handoff is the one retry layer (invariant 8) and the contract is known
// (invariant 11).
func (m *machine) autoResendAt(now time.Time) bool {
	return m.resendSafeAt(now) && m.card.Retrier() == domain.RetryByHandoff &&
		m.card.ProviderIdempotency != domain.IdempotencyUnknown && len(m.card.Unverified) == 0
}

// retryRefusal is the code a failure the card would retry gets when
// another layer (or nobody) owns the retries, "" when Handoff does.
func (m *machine) retryRefusal() string {
	switch m.card.Retrier() {
	case domain.RetryByWorker:
		return domain.CodeWorkerRetriesExhausted
	case domain.RetryByNobody:
		return domain.CodeNoAutomaticRetry
	}
	return ""
}

// exhaustedAt is the card's attempt or elapsed-time limit, as the model counts.
func (m *machine) exhaustedAt(now time.Time) bool {
	return m.budget >= m.card.Retry.MaxAttempts ||
		(m.card.Retry.MaxElapsed > 0 && m.firstAttempt != nil && now.Sub(*m.firstAttempt) >= m.card.Retry.MaxElapsed)
}

// do decides cmd on the current operation and writes the change. Nothing is
// accepted on a final operation but a note, which leaves it as it was.
func (m *machine) do(t *rapid.T, actor domain.Actor, cmd domain.Command) (domain.Operation, domain.Change, error) {
	before := m.op
	ch, err := domain.Decide(before, cmd, m.env(actor))
	if err != nil {
		if domain.ErrorCode(err) == domain.EInternal {
			t.Fatalf("%T: internal error %v", cmd, err)
		}
		return before, ch, err
	}
	if _, note := cmd.(domain.Note); before.State.Final() && (!note || ch.Op.State != before.State) {
		t.Fatalf("%T accepted on a %s operation (invariant 5)", cmd, before.State)
	}
	if ch.Unchanged {
		if ch.Op.Version != before.Version || len(ch.Events) != 0 {
			t.Fatalf("%T: an unchanged result changed the operation", cmd)
		}
		return before, ch, nil
	}
	m.record(t, before, cmd, ch)
	return before, ch, nil
}

// record writes ch to the history and checks what every change must hold.
func (m *machine) record(t *rapid.T, before domain.Operation, cmd domain.Command, ch domain.Change) {
	checkAudit(t, before.AuditHead, before.Version, before.State.String(), ch)
	n := ch.Op
	m.keepAttempt(t, ch.Attempt)
	// Invariant 2: only a claim issues a token, and it is greater than any before.
	if n.LeaseToken != before.LeaseToken {
		if n.LeaseToken != before.LeaseToken+1 || n.State != claimedState(cmd) || (len(m.tokens) > 0 && n.LeaseToken <= m.tokens[len(m.tokens)-1]) {
			t.Fatalf("%T moved the fencing token %d → %d in %s", cmd, before.LeaseToken, n.LeaseToken, n.State)
		}
		m.tokens = append(m.tokens, n.LeaseToken)
	}
	if n.State.Leased() && !before.State.Leased() { // a granted claim, begun at once or not
		if m.sent {
			t.Fatalf("claim granted after action_pending without proof that re-sending is safe (invariant 3)")
		}
		if m.runnable == nil || !bytes.Equal(n.Content, m.runnable) || n.ContentSHA256 != domain.SHA256Hex(m.runnable) {
			t.Fatalf("claim hands out content %s, the approved snapshot is %s (invariant 7)", n.Content, m.runnable)
		}
		if n.ContentVersion > 1 || m.card.RequiresApproval {
			if a := n.Approval; a == nil || a.ContentVersion != n.ContentVersion || a.By == n.ContentAuthor {
				t.Fatalf("claim of content v%d by %q with approval %+v (invariant 7)", n.ContentVersion, n.ContentAuthor, a)
			}
		}
		lease, ok := claimLease(cmd)
		if !ok {
			t.Fatalf("%T granted a claim", cmd)
		}
		m.leaseExpires = m.now.Add(orDefault(lease, m.card.Lease))
		m.budget++
		if m.firstAttempt == nil {
			m.firstAttempt = ptr(m.now)
		}
	}
	if n.State == domain.FailedRetryable && before.State != domain.FailedRetryable && m.card.Retrier() != domain.RetryByHandoff {
		// Invariant 8: only a person's re-send under the same key may put
		// such a type back in line for a retry.
		if r, ok := cmd.(domain.Resolve); !ok || r.Action != domain.ResolveResendSameKey {
			t.Fatalf("%T scheduled a retry on a type whose retry layer is %s (invariant 8)", cmd, m.card.Retrier())
		}
	}
	if n.ProviderKey != m.providerKey {
		last := ch.Events[len(ch.Events)-1]
		if last.Action != "provider_key_changed" || n.ProviderKey != domain.ProviderKeyForVersion(m.first.ProviderKey, n.ContentVersion) ||
			n.ProviderKeyFirstSentAt != nil || (n.State != domain.Received && n.State != domain.FailedRetryable) {
			t.Fatalf("%T changed the provider key %s → %s without its own event (last %s) or to another key than v%d's",
				cmd, m.providerKey, n.ProviderKey, last.Action, n.ContentVersion)
		}
		m.providerKey, m.firstSent = n.ProviderKey, nil
	}
	if n.State == domain.ActionPending && before.State != domain.ActionPending && m.card.ProviderIdempotency != domain.IdempotencyNone {
		// Invariant 9: a provider that remembers keys never gets one with
		// content other than the content it was first sent with.
		if first, ok := m.keyContent[n.ProviderKey]; ok && first != n.ContentSHA256 {
			t.Fatalf("executed content %s under provider key %s, first sent with content %s (invariant 9)", n.ContentSHA256, n.ProviderKey, first)
		}
		m.keyContent[n.ProviderKey] = n.ContentSHA256
	}
	if n.State == domain.ActionPending {
		if entered := before.State != domain.ActionPending; entered && claimBegins(cmd) != (before.State != domain.Processing) {
			t.Fatalf("%T reached action_pending from %s (a claim that begins: %v)", cmd, before.State, claimBegins(cmd))
		}
		began := domain.ActionClaimedAndBegan
		if before.State.IsZero() {
			began = domain.ActionRegisteredAndBegan
		}
		if last := ch.Events[len(ch.Events)-1]; claimBegins(cmd) && (last.Action != began ||
			ch.Attempt == nil || !ch.Attempt.New || ch.Attempt.Attempt.BeganAt == nil || !ch.Attempt.Attempt.BeganAt.Equal(m.now)) {
			t.Fatalf("a claim that began recorded %s with attempt %+v", last.Action, ch.Attempt)
		}
		m.sent = true
		if m.firstSent == nil {
			m.firstSent = ptr(m.now)
		}
		if before.State != domain.ActionPending {
			m.lastBegan = ptr(m.now)
		}
	}
	if n.State == domain.UnknownOutcome {
		m.sent, m.guarded = true, false
	}
	switch c := cmd.(type) {
	case domain.Settle:
		m.guarded = n.LastError != nil && n.LastError.Code == domain.CodeResendGuarded && n.State == domain.FailedRetryable
		if before.State == domain.ActionPending && n.State == domain.FailedRetryable {
			if proved := c.Outcome != domain.OutcomeUnknown && !errClass(c).LeavesDoubt(); !proved && !m.autoResendAt(m.now) {
				t.Fatalf("settle %s/%s after begin re-opened the operation without proof (invariant 3)", c.Outcome, errClass(c))
			}
			m.sent = false
		}
	case domain.ExpireLease:
		if before.State == domain.ActionPending && n.State != domain.UnknownOutcome {
			if n.State != domain.FailedRetryable || !m.autoResendAt(m.now) {
				t.Fatalf("a lease that expired after begin led to %s without proof that re-sending is safe (invariant 3)", n.State)
			}
			m.sent, m.guarded = false, true
		}
	case domain.Reconcile:
		if n.State == domain.FailedRetryable || n.State == domain.FailedTerminal {
			if c.Found || !m.card.LookupAuthoritative {
				t.Fatalf("reconcile (found=%v, authoritative=%v) re-opened the operation", c.Found, m.card.LookupAuthoritative)
			}
			// Invariant 13: no not-found is proof before the last call's deadline.
			if m.lastBegan != nil && m.now.Before(m.card.NotFoundFrom(*m.lastBegan)) {
				t.Fatalf("reconcile not-found at %v re-opened the operation before the call's deadline %v (invariant 13)",
					m.now, m.card.NotFoundFrom(*m.lastBegan))
			}
			m.sent = false
		}
	case domain.Resolve:
		if n.State == domain.Received || n.State == domain.AwaitingApproval { // a person confirmed or fixed it
			m.sent, m.budget, m.firstAttempt, m.guarded = false, 0, nil, false
		}
		if n.State == domain.FailedRetryable { // a person re-sends under the same provider key
			if c.Action != domain.ResolveResendSameKey || !m.resendSafe() {
				t.Fatalf("resolve %s re-opened the operation under the key outside its retention (invariant 3)", c.Action)
			}
			m.sent, m.budget, m.firstAttempt, m.guarded = false, 0, nil, true
		}
	case domain.Approve:
		m.runnable = bytes.Clone(n.Content)
		m.budget, m.firstAttempt, m.guarded = 0, nil, false // a person changed what runs
	case domain.Revise:
		m.runnable = nil
		if before.State == domain.FailedTerminal {
			// PRODUCT.md: from failed_terminal a person "fixed the cause
			// (optionally revised the content, which needs approval again)
			// and retries" — the approval by someone else then reopens it.
			m.sent = false
		}
	}
	m.history = append(m.history, ch)
	m.op = n
	if n.State.Final() && m.final.IsZero() {
		m.final = n.State
	}
}

func orDefault(d, dflt time.Duration) time.Duration {
	if d == 0 {
		return dflt
	}
	return d
}

// claimLease is the lease a claim asked for; a registration passes *Claim.
func claimLease(cmd domain.Command) (time.Duration, bool) {
	switch c := cmd.(type) {
	case domain.Claim:
		return c.Lease, true
	case *domain.Claim:
		return c.Lease, true
	}
	return 0, false
}

// claimBegins: cmd is a claim (or a registration's) that begins at once.
func claimBegins(cmd domain.Command) bool {
	switch c := cmd.(type) {
	case domain.Claim:
		return c.Begin
	case *domain.Claim:
		return c != nil && c.Begin
	}
	return false
}

// claimedState is where a granted claim leaves the operation.
func claimedState(cmd domain.Command) domain.State {
	if claimBegins(cmd) {
		return domain.ActionPending
	}
	return domain.Processing
}

func errClass(s domain.Settle) domain.ErrorClass {
	if s.Error == nil {
		return domain.ClassUnknown
	}
	return s.Error.Class
}

// keepAttempt writes an attempt change as the store's attempt rule does: a
// claim inserts its attempt, a begin sets began_at and a settle (or an
// expiry) the outcome, the error and what the settle asked.
func (m *machine) keepAttempt(t *rapid.T, ac *domain.AttemptChange) {
	if ac == nil {
		return
	}
	a := ac.Attempt
	if ac.New {
		m.attempts = append(m.attempts, a)
		return
	}
	i := slices.IndexFunc(m.attempts, func(x domain.Attempt) bool { return x.Number == a.Number })
	if i < 0 {
		t.Fatalf("a change to attempt %d, which no claim inserted", a.Number)
	}
	if a.BeganAt != nil {
		m.attempts[i].BeganAt = a.BeganAt
	}
	if a.SettledAt != nil {
		x := &m.attempts[i]
		x.SettledAt, x.Outcome, x.Error, x.SettleSHA256 = a.SettledAt, a.Outcome, a.Error, a.SettleSHA256
	}
}

// check runs after every step: the invariants over the whole history.
func (m *machine) check(t *rapid.T) {
	op := m.op
	// Invariant 6: one gap-free, hash-chained stream from the registration on.
	prev, seq := "", int64(0)
	for _, ch := range m.history {
		for _, ev := range ch.Events {
			seq++
			if ev.Seq != seq || ev.PrevHash != prev || ev.Hash != domain.HashEvent(ev) {
				t.Fatalf("audit event %d (%s): seq %d, chained %v, hash ok %v", seq, ev.Action, ev.Seq,
					ev.PrevHash == prev, ev.Hash == domain.HashEvent(ev))
			}
			prev = ev.Hash
		}
	}
	if seq != op.Version || prev != op.AuditHead {
		t.Fatalf("stream ends at seq %d / %q, operation at version %d / %q", seq, prev, op.Version, op.AuditHead)
	}
	// Invariant 2: one lease at most, under the last token issued.
	if op.State.Leased() != (op.Lease != nil) || (op.Lease != nil && op.Lease.Token != op.LeaseToken) ||
		op.LeaseToken != int64(len(m.tokens)) || !slices.IsSorted(m.tokens) {
		t.Fatalf("%s with lease %+v, last token %d, issued %v", op.State, op.Lease, op.LeaseToken, m.tokens)
	}
	// Invariant 5.
	if !m.final.IsZero() && op.State != m.final {
		t.Fatalf("left the final state %s for %s", m.final, op.State)
	}
	// Invariant 7: the snapshot is what its hash says, and whatever a worker
	// holds or may claim is the approved one.
	if op.ContentSHA256 != domain.SHA256Hex(op.Content) {
		t.Fatalf("content_sha256 does not match the content")
	}
	switch op.State {
	case domain.Received, domain.Processing, domain.ActionPending, domain.FailedRetryable:
		if m.runnable == nil || !bytes.Equal(op.Content, m.runnable) {
			t.Fatalf("%s with content %s, approved snapshot %s", op.State, op.Content, m.runnable)
		}
	case domain.AwaitingApproval:
		if m.runnable != nil {
			t.Fatalf("awaiting approval, yet the model has an approved snapshot")
		}
	}
	// A result is the record of a completed side effect, so only a final
	// operation holds one: the desk's search finds an operation by its
	// result ref among the final ones.
	if op.Result != nil && !op.State.Final() {
		t.Fatalf("%s holds result %+v", op.State, op.Result)
	}
	// The operation's own bookkeeping agrees with the model's.
	if op.Attempts-op.RetryFrom != m.budget || !timesEqual(op.FirstAttemptAt, m.firstAttempt) ||
		!timesEqual(op.ProviderKeyFirstSentAt, m.firstSent) {
		t.Fatalf("attempts %d-%d first %v sent %v; model %d first %v sent %v", op.Attempts, op.RetryFrom,
			op.FirstAttemptAt, op.ProviderKeyFirstSentAt, m.budget, m.firstAttempt, m.firstSent)
	}
	if op.ID != m.first.ID || op.Key != m.first.Key || op.Fingerprint != m.first.Fingerprint || op.ProviderKey != m.providerKey {
		t.Fatalf("identity changed")
	}
}
