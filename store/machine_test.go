package store_test

import (
	"context"
	"encoding/json"
	"fmt"
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
func TestLedgerMachine(t *testing.T) {
	db := storetest.New(t) // one database; every check is scoped to the run's namespace
	run := 0
	rapid.Check(t, func(rt *rapid.T) {
		run++
		m := &ledgerModel{t: rt, db: db, ns: fmt.Sprintf("ns%d", run), clock: time.Now().UTC()}
		if !storetest.Postgres() {
			db.SetClock(func() time.Time { return m.clock })
		}
		m.ledger = domain.NewLedger(db, machineCards())
		m.ledger.Now = func() time.Time { return m.clock }
		m.wf = domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: m.ns}
		m.ops = map[string]*opModel{}
		m.keyContent = map[string]string{}
		rt.Repeat(map[string]func(*rapid.T){
			"register": m.register, "claim": m.claim, "begin": m.begin, "settle": m.settle,
			"staleToken": m.staleToken, "expire": m.expire, "resolve": m.resolve, "approve": m.approve,
			"revise": m.revise, "": m.check,
		})
	})
}

type opModel struct {
	id          string
	lastToken   int64
	everPending bool // reached action_pending since the last proof that resending is safe
	final       domain.State
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
}

// machineCards are the store tests' cards and a mailer whose worker owns
// the retries (retry_layer worker).
func machineCards() domain.Cards {
	cs := testCards()
	w := cs["mail.send"]
	w.Name, w.RetryLayer = "mail.worker", domain.RetryByWorker
	cs[w.Name] = w
	return cs
}

var keys = []string{"evt_1:a", "evt_1:b", "evt_2:a"}

func (m *ledgerModel) key(t *rapid.T) string { return rapid.SampledFrom(keys).Draw(t, "key") }

func (m *ledgerModel) register(t *rapid.T) {
	key := m.key(t)
	typ := rapid.SampledFrom([]string{"crm.task.create", "coupon.issue", "mail.send", "mail.worker"}).Draw(t, "type")
	content := rapid.SampledFrom([]string{`{"a":1}`, `{"a":1.0}`, `{"a":2}`}).Draw(t, "content")
	var claim *domain.Claim
	if rapid.Bool().Draw(t, "claim") {
		claim = &domain.Claim{Worker: "w", Begin: rapid.Bool().Draw(t, "begin")}
	}
	twin := m.openTwin(t, key, typ, content)
	res, err := m.ledger.Register(context.Background(), m.wf, domain.Registration{Key: key, Type: typ, Content: json.RawMessage(content), Claim: claim})
	om := m.ops[key]
	if om == nil && err == nil && twin != "" {
		// Invariant 10: a new key is no escape hatch while the twin is open.
		if op := res.Operation; op.State != domain.AwaitingApproval || op.LastError == nil ||
			op.LastError.Code != domain.CodeTwinUnresolved || !strings.Contains(op.LastError.Message, twin) || res.Claim != nil {
			t.Fatalf("invariant 10: %s registered as %s (%+v) while its twin %s is open", key, op.State, op.LastError, twin)
		}
	}
	if om == nil {
		if err != nil {
			t.Fatalf("first registration of %s: %v", key, err)
		}
		om = &opModel{id: res.Operation.ID}
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
}

func (m *ledgerModel) load(t *rapid.T) (*opModel, domain.Operation) {
	key := m.key(t)
	om := m.ops[key]
	if om == nil {
		t.Skip("not registered yet")
	}
	op, err := m.ledger.Get(context.Background(), m.wf, om.id)
	if err != nil {
		t.Fatal(err)
	}
	return om, op
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
	}
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
	if e := events[len(events)-1]; e.Action != domain.ActionClaimedAndBegan || e.ToState != domain.ActionPending.String() {
		t.Fatalf("a begun claim's last event is %s → %s", e.Action, e.ToState)
	}
	atts, err := m.db.Attempts(ctx, om.id)
	if err != nil || len(atts) == 0 || atts[len(atts)-1].BeganAt == nil || atts[len(atts)-1].ID != c.Attempt.ID {
		t.Fatalf("a begun claim's attempt: %+v (%v)", atts, err)
	}
	om.everPending = true
}

func (m *ledgerModel) claim(t *rapid.T) {
	om, _ := m.load(t)
	begin := rapid.Bool().Draw(t, "begin")
	c, err := m.ledger.Claim(context.Background(), m.wf, om.id, domain.Claim{Worker: "w", Begin: begin})
	if err == nil {
		m.granted(t, om, c, begin)
	} else if domain.ErrorCode(err) != domain.ENotClaimable {
		t.Fatalf("claim: %v", err)
	}
}

func (m *ledgerModel) begin(t *rapid.T) {
	om, op := m.load(t)
	after, err := m.ledger.Begin(context.Background(), m.wf, om.id, domain.Begin{LeaseToken: op.LeaseToken})
	if err == nil {
		om.everPending = true
		if first, ok := m.keyContent[after.ProviderKey]; ok && first != after.ContentSHA256 &&
			machineCards()[after.Type].ProviderIdempotency != domain.IdempotencyNone {
			t.Fatalf("invariant 9: %s sent content %s under %s, first sent with %s", om.id, after.ContentSHA256, after.ProviderKey, first)
		}
		if _, ok := m.keyContent[after.ProviderKey]; !ok {
			m.keyContent[after.ProviderKey] = after.ContentSHA256
		}
		if after.ProviderKeySentVersion != after.ContentVersion {
			t.Fatalf("invariant 9: %s's key was sent with v%d, the content is v%d", om.id, after.ProviderKeySentVersion, after.ContentVersion)
		}
	}
}

// openTwin names the operation of another key in the namespace with the
// same type and content whose outcome is open, "" when there is none — as
// the database holds them, compared here, not asked of the store's Twin.
func (m *ledgerModel) openTwin(t *rapid.T, key, typ, content string) string {
	canon, err := domain.CanonicalObject(json.RawMessage(content))
	if err != nil {
		t.Fatal(err)
	}
	for k, om := range m.ops {
		if k == key {
			continue
		}
		op, err := m.ledger.Get(context.Background(), m.wf, om.id)
		if err != nil {
			t.Fatal(err)
		}
		open := op.State == domain.ActionPending || op.State == domain.UnknownOutcome || op.State == domain.FailedTerminal
		if open && op.Type == typ && op.Fingerprint == domain.Fingerprint(typ, canon) {
			return op.ID
		}
	}
	return ""
}

// revise has a person revise the content.
func (m *ledgerModel) revise(t *rapid.T) {
	om, op := m.load(t)
	content := rapid.SampledFrom([]string{`{"a":3}`, `{"a":4}`}).Draw(t, "revision")
	_, _ = m.ledger.Revise(context.Background(), operator, om.id, domain.Revise{Content: json.RawMessage(content),
		Reason: "fix", ExpectedVersion: op.Version})
}

func (m *ledgerModel) settle(t *rapid.T) {
	om, op := m.load(t)
	outcome := rapid.SampledFrom(domain.Outcomes).Draw(t, "outcome")
	class := rapid.SampledFrom(domain.ErrorClasses).Draw(t, "class")
	s := domain.Settle{LeaseToken: op.LeaseToken, Outcome: outcome, Error: &domain.ErrorInfo{Class: class}}
	if outcome == domain.OutcomeCompleted {
		s.Result, s.Error = &domain.Result{Ref: "ref"}, nil
	}
	after, err := m.ledger.Settle(context.Background(), m.wf, om.id, s)
	if err != nil {
		return
	}
	card := machineCards()[op.Type]
	doubt := op.State == domain.ActionPending && (class.LeavesDoubt() || outcome == domain.OutcomeUnknown)
	if doubt && outcome != domain.OutcomeCompleted && after.State != domain.UnknownOutcome && !(after.State == domain.FailedRetryable && resendProved(after)) {
		t.Fatalf("invariant 4: a doubtful %s after begin became %s", class, after.State)
	}
	if card.IsTerminal(class) && !doubt && outcome != domain.OutcomeCompleted && after.State != domain.FailedTerminal {
		t.Fatalf("invariant 4: terminal class %s became %s", class, after.State)
	}
	if after.State == domain.FailedRetryable || after.State == domain.FailedTerminal {
		om.everPending = false // the provider proved it had no effect
	}
	if card.Retrier() == domain.RetryByWorker && outcome == domain.OutcomeFailedRetryable && after.State == domain.FailedRetryable {
		t.Fatalf("invariant 8: a retry scheduled on top of the worker's (%+v)", after)
	}
}

func (m *ledgerModel) staleToken(t *rapid.T) {
	om, op := m.load(t)
	if om.lastToken < 2 {
		t.Skip("no older token")
	}
	old := rapid.Int64Range(1, om.lastToken-1).Draw(t, "old")
	ctx := context.Background()
	_, e1 := m.ledger.Begin(ctx, m.wf, om.id, domain.Begin{LeaseToken: old})
	_, e2 := m.ledger.Heartbeat(ctx, m.wf, om.id, domain.Heartbeat{LeaseToken: old})
	_, e3 := m.ledger.Settle(ctx, m.wf, om.id, domain.Settle{LeaseToken: old, Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "x"}})
	for _, err := range []error{e1, e2, e3} {
		if domain.ErrorCode(err) != domain.EStaleLease {
			t.Fatalf("invariant 2: token %d (current %d, state %s) answered %v", old, op.LeaseToken, op.State, err)
		}
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
	if _, err := m.ledger.Sweep(context.Background(), 100); err != nil {
		t.Fatal(err)
	}
}

var operator = domain.Actor{Kind: domain.ActorPerson, Name: "olga", Email: "olga@example.com", Role: domain.RoleOperator}
var approver = domain.Actor{Kind: domain.ActorPerson, Name: "ari", Email: "ari@example.com", Role: domain.RoleApprover}

func (m *ledgerModel) resolve(t *rapid.T) {
	om, op := m.load(t)
	r := domain.Resolve{Action: rapid.SampledFrom(domain.ResolveActions).Draw(t, "action"),
		Then:   rapid.SampledFrom([]domain.ResolveAction{domain.ResolveRetry, domain.ResolveCancel}).Draw(t, "then"),
		Result: &domain.Result{Ref: "found"}, Reason: "checked the provider", ExpectedVersion: op.Version}
	after, err := m.ledger.Resolve(context.Background(), operator, om.id, r)
	if err == nil && (after.State == domain.Received || after.State == domain.AwaitingApproval) {
		om.everPending = false // a person confirmed it did not happen, or fixed the cause
	}
	if err == nil && after.State == domain.FailedRetryable {
		if r.Action != domain.ResolveResendSameKey || !resendProved(after) {
			t.Fatalf("invariant 3: resolve %s re-opened %s outside the key's retention", r.Action, after.ID)
		}
		om.everPending = false // a person re-sent under a key the provider still deduplicates
	}
	if err == nil && r.Action == domain.ResolveResendSameKey && (op.State != domain.UnknownOutcome || !resendProved(after)) {
		t.Fatalf("resend_same_key accepted in %s (first sent %v, at %v)", op.State, after.ProviderKeyFirstSentAt, after.UpdatedAt)
	}
}

// resendProved reports whether op, just re-opened after begin, was re-opened
// while its card's provider still deduplicated its key: the card
// deduplicates, the guard is set, and the change happened before the key
// left its retention window — computed here, not asked of the domain.
func resendProved(op domain.Operation) bool {
	card := machineCards()[op.Type]
	return card.ProviderIdempotency != domain.IdempotencyNone && op.ProviderKeyFirstSentAt != nil &&
		op.LastError != nil && op.LastError.Code == domain.CodeResendGuarded &&
		op.UpdatedAt.Before(op.ProviderKeyFirstSentAt.Add(card.ProviderKeyRetention))
}

func (m *ledgerModel) approve(t *rapid.T) {
	om, op := m.load(t)
	_, _ = m.ledger.Approve(context.Background(), approver, om.id, domain.Approve{ContentVersion: op.ContentVersion, Reason: "looks right"})
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
			if !resendProved(op) {
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
