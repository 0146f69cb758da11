package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
	"pgregory.net/rapid"
)

// TestLedgerMachine drives the Ledger on a real database through random
// sequences of workflow, system and human calls on a few keys, and checks
// PRODUCT.md's invariants after every step against what the database holds:
// one row per key (1), strictly increasing fencing tokens and stale tokens
// refused (2), no claim after action_pending without proof (3), the card
// enforced (4), final states final (5), a gap-free hash-chained audit stream
// written with every change (6), and claims that hand out the approved
// snapshot (7), one retry layer (8), no provider key sent with other content
// than it was first sent with (9), and twins held for a person (10). The
// pure transition function has its own, finer machine test in domain; this
// one proves the store keeps what the domain decided.
//
// The actions pick the operations they can act on (a settle one with a
// lease, an approval one awaiting it), so the paths that take several steps
// on one key are reached: a send, a refusal that proves nothing happened, a
// revision, its approval and its send under a new provider key. The test
// counts how often each path was taken and fails when one never was.
func TestLedgerMachine(t *testing.T) {
	db := storetest.New(t) // one database; every check is scoped to the run's namespace
	run := 0
	var seen machineCoverage
	rapid.Check(t, func(rt *rapid.T) {
		run++
		m := &ledgerModel{t: rt, db: db, ns: fmt.Sprintf("ns%d", run), clock: time.Now().UTC(), cover: &machineCoverage{}}
		defer seen.add(m.cover)
		if !storetest.Postgres() {
			db.SetClock(func() time.Time { return m.clock })
		}
		m.cards = machineCards(rt)
		m.ledger = domain.NewLedger(db, m.cards)
		m.ledger.Now = func() time.Time { return m.clock }
		m.wf = domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: m.ns}
		m.ops = map[string]*opModel{}
		m.keyContent, m.keyBy = map[string]string{}, map[string]string{}
		m.cover.retryLayerSeen = map[string]int{}
		// A run's operations share the mailer's type and maybe one other,
		// so that same-type twins and one card's multi-step paths come up.
		m.types = append([]string{"mail.send"}, rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"crm.task.create", "coupon.issue"}), 0, 1, rapid.ID[string]).Draw(rt, "types")...)
		// A run starts with operations to act on: an action with none is
		// skipped, and rapid ends a run that skips too often.
		for range rapid.IntRange(1, len(keys)).Draw(rt, "registered") {
			m.register(rt)
		}
		actions := map[string]func(*rapid.T){
			"register": m.register, "claim": m.claim, "begin": m.begin, "settle": m.settle,
			"staleToken": m.staleToken, "resettle": m.resettle, "expire": m.expire, "resolve": m.resolve, "approve": m.approve,
			"revise": m.revise, "reconcile": m.reconcile, "": m.check,
		}
		if storetest.Postgres() {
			delete(actions, "expire") // PostgreSQL's clock cannot be moved
		}
		// Three rounds of rapid's average 30 steps: the paths that matter
		// here take five or six steps on one key, and an action drawn for
		// another key or refused counts as a step too.
		for range 3 {
			rt.Repeat(actions)
		}
	})
	t.Logf("%d runs; runs that reached each path: %s", run, seen.String())
	seen.require(t)
}

// machineCoverage counts the paths a run took; added up over the runs, the
// share of runs that took each one.
type machineCoverage struct {
	keyChanged    int // a revision sent under a new provider key after the old one was sent
	keyChangeHeld int // an approved revision held while the earlier send may have executed
	// heldResendRefused: a person's resend_same_key of a held revision,
	// refused. Counted, not required: it takes a held revision first.
	heldResendRefused int
	twinHeld          int            // a registration held as a twin of an open operation
	twinApproved      int            // a held twin approved as a deliberate second execution
	retryLayerSeen    map[string]int // settled failures someone might retry, by the card's retry layer
}

func (c *machineCoverage) add(r *machineCoverage) {
	if c.retryLayerSeen == nil {
		c.retryLayerSeen = map[string]int{}
	}
	c.keyChanged += min(r.keyChanged, 1)
	c.keyChangeHeld += min(r.keyChangeHeld, 1)
	c.heldResendRefused += min(r.heldResendRefused, 1)
	c.twinHeld += min(r.twinHeld, 1)
	c.twinApproved += min(r.twinApproved, 1)
	for l, n := range r.retryLayerSeen {
		c.retryLayerSeen[l] += min(n, 1)
	}
}

func (c *machineCoverage) String() string {
	return fmt.Sprintf("key changed and sent %d, revision held %d, its re-send under the old key refused %d, twin held %d, twin approved %d, "+
		"retryable settle by layer %v", c.keyChanged, c.keyChangeHeld, c.heldResendRefused, c.twinHeld, c.twinApproved, c.retryLayerSeen)
}

// require fails the test when a path was never taken: its invariants
// would then hold for want of a case.
func (c *machineCoverage) require(t *testing.T) {
	t.Helper()
	for name, n := range map[string]int{"a revision sent under a new provider key": c.keyChanged, "a held revision": c.keyChangeHeld,
		"a held twin": c.twinHeld, "an approved twin": c.twinApproved, "retry_layer handoff": c.retryLayerSeen["handoff"],
		"retry_layer worker": c.retryLayerSeen["worker"], "retry_layer none": c.retryLayerSeen["none"]} {
		if n == 0 {
			t.Errorf("no run reached %s", name)
		}
	}
}

type opModel struct {
	id          string
	sentKey     string // the provider key of the last begin
	sentVersion int    // and the content version it sent
	lastToken   int64
	everPending bool // reached action_pending since the last proof that resending is safe
	final       domain.State
	settles     map[int64]domain.Settle // lease token → the settle that committed with it (invariant 15)
}

type ledgerModel struct {
	t      *rapid.T
	db     *store.Store
	ledger *domain.Ledger
	ns     string
	wf     domain.Actor
	clock  time.Time
	ops    map[string]*opModel
	// keyContent is the content hash each provider key was first sent
	// with, across the namespace's operations (invariant 9).
	keyContent map[string]string
	keyBy      map[string]string // and which operation sent it
	types      []string          // the types this run registers
	cards      domain.Cards
	cover      *machineCoverage
}

// machineCards are the store tests' cards, with the mailer's contract
// drawn for the run: who retries (retry_layer handoff, worker or none) and
// how the provider treats a re-send under a key it has seen (key, or
// key_and_params: a changed one refused).
func machineCards(t *rapid.T) domain.Cards {
	cs := testCards()
	mail := cs["mail.send"]
	mail.RetryLayer = rapid.SampledFrom([]domain.RetryLayer{domain.RetryByHandoff, domain.RetryByWorker, domain.RetryByNobody}).Draw(t, "retry_layer")
	mail.ProviderIdempotency = rapid.SampledFrom([]domain.ProviderIdempotency{domain.IdempotencyKey, domain.IdempotencyKeyAndParams}).Draw(t, "provider_idempotency")
	if rapid.Bool().Draw(t, "lookup_authoritative") { // a workflow's not-found then counts, after the call's deadline
		mail.Lookup, mail.LookupAuthoritative = domain.LookupAPI, true
	}
	cs[mail.Name] = mail
	return cs
}

var keys = []string{"evt_1:a", "evt_1:b", "evt_2:a"}

func (m *ledgerModel) key(t *rapid.T) string { return rapid.SampledFrom(keys).Draw(t, "key") }

func (m *ledgerModel) register(t *rapid.T) {
	key := m.key(t)
	typ := rapid.SampledFrom(m.types).Draw(t, "type")
	content := rapid.SampledFrom([]string{`{"a":1}`, `{"a":1.0}`, `{"a":2}`}).Draw(t, "content")
	var claim *domain.Claim
	if rapid.Bool().Draw(t, "claim") {
		claim = &domain.Claim{Worker: "w", Begin: rapid.Bool().Draw(t, "begin")}
	}
	twins := m.openTwins(t, key, typ, content)
	res, err := m.ledger.Workflow.Register(context.Background(), m.wf, domain.Registration{Key: key, Type: typ, Content: json.RawMessage(content), Claim: claim})
	om := m.ops[key]
	if om == nil && err == nil && len(twins) > 0 {
		// Invariant 10: a new key is no escape hatch while a twin is open.
		if op := res.Operation; op.State != domain.AwaitingApproval || op.LastError == nil || op.LastError.Code != domain.CodeTwinUnresolved ||
			!slices.ContainsFunc(twins, func(id string) bool { return strings.Contains(op.LastError.Message, id) }) || res.Claim != nil {
			t.Fatalf("invariant 10: %s registered as %s (%+v) while its twins %v are open", key, op.State, op.LastError, twins)
		}
		m.cover.twinHeld++
	}
	if om == nil {
		if err != nil {
			t.Fatalf("first registration of %s: %v", key, err)
		}
		om = &opModel{id: res.Operation.ID, settles: map[int64]domain.Settle{}}
		m.ops[key] = om
	} else if err != nil {
		if domain.ErrorCode(err) != domain.EFingerprint {
			t.Fatalf("re-registration of %s: %v", key, err)
		}
		return
	} else if res.Operation.ID != om.id {
		t.Fatalf("invariant 1: key %s now names %s, was %s", key, res.Operation.ID, om.id)
	}
	if res.Claim != nil {
		m.granted(t, om, *res.Claim, claim.Begin)
	}
	if res.Created {
		m.registered(t, om, res, claim)
	}
}

// registered checks a new registration against the database: one event,
// at version 1, named for the claim made with it and carrying it.
func (m *ledgerModel) registered(t *rapid.T, om *opModel, res domain.RegisterResult, claim *domain.Claim) {
	events, err := m.db.Timeline(context.Background(), om.id)
	if err != nil || len(events) != 1 || res.Operation.Version != 1 {
		t.Fatalf("a registration (claim %+v) wrote %d events at version %d (%v), want one", claim, len(events), res.Operation.Version, err)
	}
	want, worker, attempt := "registered", "", ""
	if c := res.Claim; c != nil {
		want, worker, attempt = domain.ActionRegisteredAndClaimed, c.Lease.Worker, c.Attempt.ID
		if claim.Begin {
			want = domain.ActionRegisteredAndBegan
		}
	}
	var d struct {
		Fingerprint string `json:"fingerprint"`
		Worker      string `json:"worker"`
		AttemptID   string `json:"attempt_id"`
	}
	e := events[0]
	if err := json.Unmarshal(e.Detail, &d); err != nil || e.Action != want || e.ToState != res.Operation.State.String() ||
		d.Fingerprint != res.Operation.Fingerprint || d.Worker != worker || d.AttemptID != attempt {
		t.Fatalf("a registration (claim %+v) wrote %s → %s with %s, want %s", claim, e.Action, e.ToState, e.Detail, want)
	}
}

func (m *ledgerModel) load(t *rapid.T) (*opModel, domain.Operation) {
	key := m.key(t)
	om := m.ops[key]
	if om == nil {
		t.Skip("not registered yet")
	}
	op, err := m.ledger.Workflow.Get(context.Background(), m.wf, om.id)
	if err != nil {
		t.Fatal(err)
	}
	return om, op
}

// loadOrPick is load or pick, drawn: an action on any key (whose refusal
// is checked too) or on one it applies to.
func (m *ledgerModel) loadOrPick(t *rapid.T, states ...domain.State) (*opModel, domain.Operation) {
	if rapid.IntRange(0, 2).Draw(t, "any") == 0 {
		return m.load(t)
	}
	return m.pick(t, states...)
}

// pick draws one of the registered operations in one of states, as the
// database holds them: an action that needs a state acts where it can, so
// a path of several steps on one key is not left to chance. With none
// there, it is any operation (load).
func (m *ledgerModel) pick(t *rapid.T, states ...domain.State) (*opModel, domain.Operation) {
	var oms []*opModel
	var ops []domain.Operation
	for _, key := range keys {
		om := m.ops[key]
		if om == nil {
			continue
		}
		op, err := m.ledger.Workflow.Get(context.Background(), m.wf, om.id)
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(states, op.State) {
			oms, ops = append(oms, om), append(ops, op)
		}
	}
	if len(oms) == 0 { // the action is tried where it does not apply: its refusal is checked
		return m.load(t)
	}
	i := rapid.IntRange(0, len(oms)-1).Draw(t, "pick")
	return oms[i], ops[i]
}

func (m *ledgerModel) granted(t *rapid.T, om *opModel, c domain.ClaimResult, begin bool) {
	if c.Lease.Token <= om.lastToken {
		t.Fatalf("invariant 2: token %d after %d", c.Lease.Token, om.lastToken)
	}
	if om.everPending {
		t.Fatalf("invariant 3: %s claimed again after action_pending without proof", om.id)
	}
	if domain.SHA256Hex(c.Operation.Content) != c.Operation.ContentSHA256 {
		t.Fatalf("invariant 7: claim content does not match its hash")
	}
	if c.Operation.Type == "coupon.issue" && (c.Operation.Approval == nil || c.Operation.Approval.ContentVersion != c.Operation.ContentVersion) {
		t.Fatalf("invariant 7: claimed a snapshot nobody approved")
	}
	om.lastToken = c.Lease.Token
	if begin {
		m.begun(t, om, c)
		m.sent(t, om, c.Operation)
	}
}

// sent checks a begin — the content is now with the provider under its
// provider key — against every key sent before in the namespace: a key
// that deduplicates is never sent with other content than it was first
// sent with (invariant 9), and a revision sent after the old key was spent
// goes out under the key derived from the operation and its content
// version, with the change on the timeline.
func (m *ledgerModel) sent(t *rapid.T, om *opModel, after domain.Operation) {
	om.everPending = true
	dedupes := m.cards[after.Type].DedupesByKey()
	if first, ok := m.keyContent[after.ProviderKey]; ok && first != after.ContentSHA256 && dedupes {
		t.Fatalf("invariant 9: %s (%s v%d) sent content %s under %s, first sent with %s by %s; its timeline:\n%s", om.id, after.Key,
			after.ContentVersion, after.ContentSHA256[:8], after.ProviderKey, first[:8], m.keyBy[after.ProviderKey], m.timeline(om.id))
	}
	if _, ok := m.keyContent[after.ProviderKey]; !ok {
		m.keyContent[after.ProviderKey] = after.ContentSHA256
		m.keyBy[after.ProviderKey] = fmt.Sprintf("%s (%s v%d)", after.ID, after.Key, after.ContentVersion)
	}
	if after.ProviderKeySentVersion != after.ContentVersion && dedupes { // a key nobody deduplicates keeps its first version
		t.Fatalf("invariant 9: %s's key was sent with v%d, the content is v%d", om.id, after.ProviderKeySentVersion, after.ContentVersion)
	}
	if om.sentKey != "" && om.sentKey != after.ProviderKey {
		// The new key is derived from the operation and the version it was
		// renewed for: this one, or a revision since that was never sent.
		base, derived := domain.ProviderKeyFor(m.ns, after.Key), false
		for v := om.sentVersion + 1; v <= after.ContentVersion; v++ {
			derived = derived || after.ProviderKey == domain.ProviderKeyForVersion(base, v)
		}
		if !dedupes || !derived {
			t.Fatalf("invariant 9: %s (%s) sent v%d under %s after v%d under %s: not a key derived from a version since", om.id,
				after.Type, after.ContentVersion, after.ProviderKey, om.sentVersion, om.sentKey)
		}
		events, err := m.db.Timeline(context.Background(), om.id)
		if err != nil || !slices.ContainsFunc(events, func(e domain.AuditEvent) bool { return e.Action == "provider_key_changed" }) {
			t.Fatalf("%s's provider key changed without a provider_key_changed event (%v)", om.id, err)
		}
		m.cover.keyChanged++
	}
	om.sentKey, om.sentVersion = after.ProviderKey, after.ContentVersion
}

// begun checks a claim that began at once against the database: the
// operation as answered, action_pending, and one event for both facts
// after which nothing else was written; the attempt's began_at set.
func (m *ledgerModel) begun(t *rapid.T, om *opModel, c domain.ClaimResult) {
	ctx := context.Background()
	op, _, err := m.db.Load(ctx, m.ns, om.id)
	if err != nil || op.State != domain.ActionPending || op.Version != c.Operation.Version || op.ProviderKeyFirstSentAt == nil {
		t.Fatalf("a begun claim answered %s v%d, the database holds %s v%d sent %v (%v)", c.Operation.State,
			c.Operation.Version, op.State, op.Version, op.ProviderKeyFirstSentAt, err)
	}
	events, err := m.db.Timeline(ctx, om.id)
	if err != nil || len(events) == 0 {
		t.Fatalf("timeline of %s: %v", om.id, err)
	}
	want := domain.ActionClaimedAndBegan
	if c.Operation.Version == 1 { // begun with its registration
		want = domain.ActionRegisteredAndBegan
	}
	if e := events[len(events)-1]; e.Action != want || e.ToState != domain.ActionPending.String() {
		t.Fatalf("a begun claim's last event is %s → %s", e.Action, e.ToState)
	}
	atts, err := m.db.Attempts(ctx, om.id)
	if err != nil || len(atts) == 0 || atts[len(atts)-1].BeganAt == nil || atts[len(atts)-1].ID != c.Attempt.ID {
		t.Fatalf("a begun claim's attempt: %+v (%v)", atts, err)
	}
	om.everPending = true
}

func (m *ledgerModel) claim(t *rapid.T) {
	om, _ := m.loadOrPick(t, domain.Received, domain.FailedRetryable)
	begin := rapid.Bool().Draw(t, "begin")
	c, err := m.ledger.Workflow.Claim(context.Background(), m.wf, om.id, domain.Claim{Worker: "w", Begin: begin})
	if err == nil {
		m.granted(t, om, c, begin)
	} else if domain.ErrorCode(err) != domain.ENotClaimable {
		t.Fatalf("claim: %v", err)
	}
}

func (m *ledgerModel) begin(t *rapid.T) {
	om, op := m.loadOrPick(t, domain.Processing)
	after, err := m.ledger.Workflow.Begin(context.Background(), m.wf, om.id, domain.Begin{LeaseToken: op.LeaseToken})
	if err == nil && op.State == domain.Processing {
		m.sent(t, om, after)
	}
}

// openTwins names the operations of other keys in the namespace with the
// same type and content that are open (domain.TwinStates) — as the database holds
// them, compared here, not asked of the store's Twin.
func (m *ledgerModel) openTwins(t *rapid.T, key, typ, content string) []string {
	canon, err := domain.CanonicalObject(json.RawMessage(content))
	if err != nil {
		t.Fatal(err)
	}
	var twins []string
	for k, om := range m.ops {
		if k == key {
			continue
		}
		op, err := m.ledger.Workflow.Get(context.Background(), m.wf, om.id)
		if err != nil {
			t.Fatal(err)
		}
		open := slices.Contains(domain.TwinStates, op.State)
		if open && op.Type == typ && op.Fingerprint == domain.Fingerprint(typ, canon) {
			twins = append(twins, op.ID)
		}
	}
	return twins
}

// revise has a person revise the content.
func (m *ledgerModel) revise(t *rapid.T) {
	om, op := m.pick(t, domain.Received, domain.FailedRetryable, domain.FailedTerminal, domain.AwaitingApproval)
	content := rapid.SampledFrom([]string{`{"a":3}`, `{"a":4}`}).Draw(t, "revision")
	_, _ = m.ledger.Desk.Revise(context.Background(), operator, om.id, domain.Revise{Content: json.RawMessage(content),
		Reason: "fix", ExpectedVersion: op.Version})
}

func (m *ledgerModel) settle(t *rapid.T) {
	om, op := m.pick(t, domain.Processing, domain.ActionPending)
	outcome := rapid.SampledFrom(append(slices.Clone(domain.Outcomes), domain.OutcomeFailedRetryable)).Draw(t, "outcome")
	class := rapid.SampledFrom(settleClasses).Draw(t, "class")
	s := domain.Settle{LeaseToken: op.LeaseToken, Outcome: outcome, Error: &domain.ErrorInfo{Class: class}}
	if outcome == domain.OutcomeCompleted {
		s.Result, s.Error = &domain.Result{Ref: "ref"}, nil
	}
	after, err := m.ledger.Workflow.Settle(context.Background(), m.wf, om.id, s)
	if err != nil {
		return
	}
	om.settles[s.LeaseToken] = s
	card := m.cards[op.Type]
	doubt := op.State == domain.ActionPending && (class.LeavesDoubt() || outcome == domain.OutcomeUnknown)
	if doubt && outcome != domain.OutcomeCompleted && after.State != domain.UnknownOutcome && !(after.State == domain.FailedRetryable && m.resendProved(after)) {
		t.Fatalf("invariant 4: a doubtful %s after begin became %s", class, after.State)
	}
	if card.IsTerminal(class) && !doubt && outcome != domain.OutcomeCompleted && after.State != domain.FailedTerminal {
		t.Fatalf("invariant 4: terminal class %s became %s", class, after.State)
	}
	if after.State == domain.FailedRetryable || after.State == domain.FailedTerminal {
		om.everPending = false // the provider proved it had no effect
	}
	if outcome == domain.OutcomeFailedRetryable || card.IsRetryable(class) || class.LeavesDoubt() {
		// A failure someone might retry: only Handoff's own layer schedules it.
		m.cover.retryLayerSeen[card.Retrier().String()]++
		if card.Retrier() != domain.RetryByHandoff && (after.State == domain.FailedRetryable || after.NextRetryAt != nil) {
			t.Fatalf("invariant 8: a retry scheduled on top of retry_layer %s (%+v)", card.Retrier(), after)
		}
	}
}

// settleClasses are the error classes a settle draws from, the ones that
// decide a path more often: a refusal that proves nothing ran (validation,
// auth) and a retryable one (rate_limited, which leaves no doubt).
var settleClasses = append(slices.Clone(domain.ErrorClasses), domain.ClassValidation, domain.ClassAuth,
	domain.ClassRateLimited, domain.ClassRateLimited, domain.ClassValidation)

func (m *ledgerModel) staleToken(t *rapid.T) {
	om, op := m.load(t)
	if om.lastToken < 2 {
		t.Skip("no older token")
	}
	old := rapid.Int64Range(1, om.lastToken-1).Draw(t, "old")
	ctx := context.Background()
	_, e1 := m.ledger.Workflow.Begin(ctx, m.wf, om.id, domain.Begin{LeaseToken: old})
	_, e2 := m.ledger.Workflow.Heartbeat(ctx, m.wf, om.id, domain.Heartbeat{LeaseToken: old})
	_, e3 := m.ledger.Workflow.Settle(ctx, m.wf, om.id, domain.Settle{LeaseToken: old, Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "x"}})
	for _, err := range []error{e1, e2, e3} {
		if domain.ErrorCode(err) != domain.EStaleLease {
			t.Fatalf("invariant 2: token %d (current %d, state %s) answered %v", old, op.LeaseToken, op.State, err)
		}
	}
}

// resettle sends again a settle that committed, as a worker whose answer
// was lost does, then one that differs from it in what it asks, both with
// the token that is no longer current. Invariant 15: the first is answered
// with the operation as the database holds it, as a replay, and writes
// nothing; the second is refused as a stale lease.
func (m *ledgerModel) resettle(t *rapid.T) {
	om, op := m.load(t)
	var tokens []int64
	for tok := range om.settles {
		tokens = append(tokens, tok)
	}
	if len(tokens) == 0 {
		t.Skip("nothing settled")
	}
	slices.Sort(tokens)
	s := om.settles[rapid.SampledFrom(tokens).Draw(t, "resettle_token")]
	ctx := context.Background()
	again, replayed, err := m.ledger.Workflow.SettleOnce(ctx, m.wf, om.id, s)
	if err != nil || !replayed || again.ID != op.ID {
		t.Fatalf("invariant 15: settle %+v repeated on %s v%d answered %s v%d, replayed %v, %v", s, op.State, op.Version,
			again.State, again.Version, replayed, err)
	}
	// The answer is the operation as the database holds it; whatever
	// moved it since it was read is what time made due (the system's
	// events: on SQLite the clock moves), never the repeat.
	events, err := m.db.Timeline(ctx, op.ID)
	if err != nil || int64(len(events)) != again.Version {
		t.Fatalf("invariant 15: answered v%d, %d events (%v)", again.Version, len(events), err)
	}
	for _, e := range events[op.Version:] {
		if e.Actor.Kind != domain.ActorSystem {
			t.Fatalf("invariant 15: a repeated settle wrote %s by %s:\n%s", e.Action, e.Actor.Kind, m.timeline(op.ID))
		}
	}
	op = again
	other := s
	if s.Outcome == domain.OutcomeCompleted {
		other.Result = &domain.Result{Ref: s.Result.Ref + "-other"}
	} else {
		other.Error = &domain.ErrorInfo{Class: s.Error.Class, Code: "other"}
	}
	if _, replayed, err := m.ledger.Workflow.SettleOnce(ctx, m.wf, om.id, other); replayed || domain.ErrorCode(err) != domain.EStaleLease {
		t.Fatalf("invariant 15: another settle %+v with a settled token answered replayed %v, %v", other, replayed, err)
	}
	if now, err := m.ledger.Workflow.Get(ctx, m.wf, om.id); err != nil || now.Version != op.Version {
		t.Fatalf("invariant 15: a repeated settle moved %s from v%d to v%d (%v)", om.id, op.Version, now.Version, err)
	}
}

// expire moves the clock past every lease; SQLite only, where the store's
// clock is the process's.
func (m *ledgerModel) expire(t *rapid.T) {
	if storetest.Postgres() {
		t.Skip("PostgreSQL's clock cannot be moved")
	}
	// Two minutes stays inside mail.send's key retention, six leave it.
	m.clock = m.clock.Add(rapid.SampledFrom([]time.Duration{2 * time.Minute, 6 * time.Minute}).Draw(t, "advance"))
	if _, err := m.ledger.Upkeep.Sweep(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
	// A sweep leaves no resend guard behind whose key's retention has
	// ended: it is handed on at once, not at the next claim.
	for key, om := range m.ops {
		op, err := m.ledger.Workflow.Get(context.Background(), m.wf, om.id)
		if err != nil {
			t.Fatal(err)
		}
		if domain.ResendLapsed(op, m.cards[op.Type], m.clock) {
			t.Fatalf("%s: a sweep left a lapsed resend guard in %s (%+v)", key, op.State, op.LastError)
		}
	}
}

// reconcile reports a workflow's lookup that found nothing. On an
// authoritative card it counts only once the last call's deadline has
// passed (invariant 13); before, the operation stays unknown_outcome.
func (m *ledgerModel) reconcile(t *rapid.T) {
	ctx := context.Background()
	om, op := m.pick(t, domain.UnknownOutcome)
	if op.State != domain.UnknownOutcome {
		t.Skip("no unknown outcome")
	}
	card := m.cards[op.Type]
	atts, err := m.ledger.Workflow.Attempts(ctx, m.wf, op.ID)
	if err != nil {
		t.Fatal(err)
	}
	var began time.Time
	for _, a := range atts {
		if a.BeganAt != nil && a.BeganAt.After(began) {
			began = *a.BeganAt
		}
	}
	from := card.NotFoundFrom(began)
	early := m.now().Before(from)
	got, err := m.ledger.Workflow.Reconcile(ctx, m.wf, op.ID, domain.Reconcile{Evidence: "GET /messages/" + op.ProviderKey + " → 404"})
	if err != nil {
		t.Fatal(err)
	}
	moved := got.State != domain.UnknownOutcome
	switch {
	case moved && (!card.LookupAuthoritative || m.now().Before(from)):
		t.Fatalf("invariant 13: a not-found moved %s to %s before the call's deadline %v (authoritative %t)", op.ID, got.State, from, card.LookupAuthoritative)
	case !moved && card.LookupAuthoritative && !early:
		t.Fatalf("an authoritative not-found after the call's deadline %v left %s unknown_outcome", from, op.ID)
	}
	if moved {
		om.everPending = false // the provider proved it did nothing (failed_terminal where Handoff does not retry)
	}
}

// now is the database's clock as the model knows it: moved by the model on
// SQLite, the real one on PostgreSQL.
func (m *ledgerModel) now() time.Time {
	if storetest.Postgres() {
		return time.Now()
	}
	return m.clock
}

var operator = domain.Actor{Kind: domain.ActorPerson, Name: "olga", Email: "olga@example.com", Role: domain.RoleOperator}
var approver = domain.Actor{Kind: domain.ActorPerson, Name: "ari", Email: "ari@example.com", Role: domain.RoleApprover}

func (m *ledgerModel) resolve(t *rapid.T) {
	om, op := m.pick(t, domain.UnknownOutcome, domain.FailedTerminal)
	actions := append(slices.Clone(domain.ResolveActions), domain.ResolveConfirmNotExecuted, domain.ResolveRetry)
	held := op.LastError != nil && op.LastError.Code == domain.CodeRevisionWaits
	if held { // the decisions a held revision offers, the tempting wrong one among them
		actions = []domain.ResolveAction{domain.ResolveResendSameKey, domain.ResolveConfirmNotExecuted, domain.ResolveConfirmExecuted}
	}
	r := domain.Resolve{Action: rapid.SampledFrom(actions).Draw(t, "action"),
		Then:   rapid.SampledFrom([]domain.ResolveAction{domain.ResolveRetry, domain.ResolveCancel}).Draw(t, "then"),
		Result: &domain.Result{Ref: "found"}, Reason: "checked the provider", ExpectedVersion: op.Version}
	after, err := m.ledger.Desk.Resolve(context.Background(), operator, om.id, r)
	if held && r.Action == domain.ResolveResendSameKey {
		// Invariant 9: the key was sent with the earlier content.
		if err == nil {
			t.Fatalf("invariant 9: resend_same_key sent %s's held v%d under %s, sent with v%d", om.id, op.ContentVersion,
				op.ProviderKey, op.ProviderKeySentVersion)
		}
		m.cover.heldResendRefused++
	}
	if err == nil && (after.State == domain.Received || after.State == domain.AwaitingApproval) {
		om.everPending = false // a person confirmed it did not happen, or fixed the cause
	}
	if err == nil && after.State == domain.FailedRetryable {
		if r.Action != domain.ResolveResendSameKey || !m.resendProved(after) {
			t.Fatalf("invariant 3: resolve %s re-opened %s outside the key's retention", r.Action, after.ID)
		}
		om.everPending = false // a person re-sent under a key the provider still deduplicates
	}
	if err == nil && r.Action == domain.ResolveResendSameKey && (op.State != domain.UnknownOutcome || !m.resendProved(after)) {
		t.Fatalf("resend_same_key accepted in %s (first sent %v, at %v)", op.State, after.ProviderKeyFirstSentAt, after.UpdatedAt)
	}
}

// resendProved reports whether op, just re-opened after begin, was re-opened
// while its card's provider still deduplicated its key: the card
// deduplicates, the guard is set, and the change happened before the key
// left its retention window — computed here, not asked of the domain.
func (m *ledgerModel) resendProved(op domain.Operation) bool {
	card := m.cards[op.Type]
	return card.ProviderIdempotency != domain.IdempotencyNone && op.ProviderKeyFirstSentAt != nil &&
		op.LastError != nil && op.LastError.Code == domain.CodeResendGuarded &&
		op.UpdatedAt.Before(op.ProviderKeyFirstSentAt.Add(card.ProviderKeyRetention))
}

func (m *ledgerModel) approve(t *rapid.T) {
	om, op := m.pick(t, domain.AwaitingApproval)
	after, err := m.ledger.Desk.Approve(context.Background(), approver, om.id, domain.Approve{ContentVersion: op.ContentVersion, Reason: "looks right"})
	if err != nil {
		if op.State == domain.AwaitingApproval && op.ContentAuthor != approver.Identity() {
			t.Fatalf("approve of %s (%s, by %s): %v", om.id, op.State, op.ContentAuthor, err)
		}
		return
	}
	if op.LastError != nil && op.LastError.Code == domain.CodeTwinUnresolved {
		events, err := m.db.Timeline(context.Background(), om.id)
		if err != nil || !strings.Contains(string(lastOf(events, "approved").Detail), "deliberate_second_execution") {
			t.Fatalf("invariant 10: the twin %s was approved without recording a deliberate second execution (%v)", om.id, err)
		}
		m.cover.twinApproved++
	}
	if after.State == domain.UnknownOutcome {
		if after.LastError == nil || after.LastError.Code != domain.CodeRevisionWaits || !m.cards[op.Type].DedupesByKey() {
			t.Fatalf("invariant 9: approving %s's v%d left it %s (%+v)", om.id, op.ContentVersion, after.State, after.LastError)
		}
		m.cover.keyChangeHeld++
	}
}

// timeline is id's audit events, one a line: what a failure shows.
func (m *ledgerModel) timeline(id string) string {
	events, err := m.db.Timeline(context.Background(), id)
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, e := range events {
		fmt.Fprintf(&b, "  %d %s %s→%s %s\n", e.Seq, e.Action, e.FromState, e.ToState, e.Detail)
	}
	return b.String()
}

// lastOf is the last of events with the action, the zero event when none.
func lastOf(events []domain.AuditEvent, action string) domain.AuditEvent {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Action == action {
			return events[i]
		}
	}
	return domain.AuditEvent{}
}

// check runs after every step.
func (m *ledgerModel) check(t *rapid.T) {
	ctx := context.Background()
	for key, om := range m.ops {
		list, _, err := m.db.List(ctx, domain.ListQuery{Namespace: m.ns, Key: key})
		if err != nil || len(list) != 1 {
			t.Fatalf("invariant 1: key %s has %d rows (%v)", key, len(list), err)
		}
		op := list[0]
		if om.final != (domain.State{}) && op.State != om.final {
			t.Fatalf("invariant 5: %s left final state %s for %s", key, om.final, op.State)
		}
		if op.State.Final() {
			om.final = op.State
		}
		if op.State == domain.ActionPending {
			om.everPending = true
		}
		if op.State == domain.UnknownOutcome {
			om.everPending = true
		}
		if op.State == domain.FailedRetryable && om.everPending {
			// Only the resend policy re-opens it without a step of the model
			// seeing why (a lease that expired after begin, by the sweeper).
			if !m.resendProved(op) {
				t.Fatalf("invariant 3: %s failed_retryable after begin without proof (error %+v)", key, op.LastError)
			}
			om.everPending = false
		}
		events, err := m.db.Timeline(ctx, op.ID)
		if err != nil || int64(len(events)) != op.Version {
			t.Fatalf("invariant 6: %s at version %d has %d audit events (%v)", key, op.Version, len(events), err)
		}
		prev := ""
		for i, e := range events {
			if e.Seq != int64(i+1) || e.PrevHash != prev || e.Hash != domain.HashEvent(e) {
				t.Fatalf("invariant 6: event %d of %s breaks the chain", i+1, key)
			}
			prev = e.Hash
		}
		if op.AuditHead != prev {
			t.Fatalf("invariant 6: audit head of %s is not its last event", key)
		}
	}
}
