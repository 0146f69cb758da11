package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/lookup"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/sandbox"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

const lookupSecret = "sk_test_51LookupSecretNeverShown"

// lookupRig is a CRM in the sandbox, cards whose adapters read it, a
// ledger, and the lookup loop on a clock the test moves.
type lookupRig struct {
	t      *testing.T
	ctx    context.Context
	st     *store.Store
	ledger *domain.Ledger
	sbx    *sandbox.Sandbox
	srv    *httptest.Server
	now    atomic.Pointer[time.Time]
	logs   *bytes.Buffer
	logMu  sync.Mutex
	auth   atomic.Value // the last Authorization header the CRM saw
	delay  atomic.Int64 // how long the CRM takes to answer a lookup
}

func (r *lookupRig) Now() time.Time { return *r.now.Load() }

func (r *lookupRig) advance(d time.Duration) { n := r.Now().Add(d); r.now.Store(&n) }

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func newLookupRig(t *testing.T, cfg sandbox.Config) *lookupRig {
	t.Helper()
	r := &lookupRig{t: t, ctx: context.Background(), st: storetest.New(t), logs: &bytes.Buffer{}}
	n := time.Now().UTC()
	r.now.Store(&n)
	if cfg.Lookup == "" {
		cfg.Lookup = sandbox.LookupAuthoritative
	}
	sbx, err := sandbox.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.sbx = sbx
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.auth.Store(req.Header.Get("Authorization"))
		if strings.HasPrefix(req.URL.Path, "/v1/") {
			time.Sleep(time.Duration(r.delay.Load()))
		}
		sbx.Handler().ServeHTTP(w, req)
	}))
	t.Cleanup(r.srv.Close)
	r.ledger = domain.NewLedger(r.st, lookupCards(r.srv.URL))
	return r
}

// lookupCards: crm.list reads the CRM's lagging list (a miss there proves
// nothing), crm.get reads a record by ID (a 404 is authoritative), and
// crm.down points at a port nobody answers.
func lookupCards(base string) domain.Cards {
	list := domain.Card{Name: "crm.list", Provider: "crm", ProviderIdempotency: domain.IdempotencyNone,
		Lookup: domain.LookupAPI, NotifyURL: "https://hooks.example.com/handoff",
		Retry: domain.RetryPolicy{MaxAttempts: 3, Backoff: time.Second, BackoffMax: time.Second}, Lease: 30 * time.Second,
		LookupAdapter: &domain.LookupAdapter{Method: "GET", URL: base + "/v1/records?external_id={provider_key}", AuthEnv: "CRM_TOKEN",
			Found: domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", WhenNonempty: "/data", State: "/data/0/status",
				DoneStates: []string{"completed"}, Compare: []domain.LookupCompare{{Answer: "/data/0/params/subject", Content: "/subject"}}},
			NotFoundStatus: []int{404}, Window: 2 * time.Minute}}
	list.TwinsAllowed = true // these scenarios send one content under several keys on purpose
	get := list
	get.Name, get.LookupAuthoritative = "crm.get", true
	get.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: base + "/v1/records/{provider_key}", AuthEnv: "CRM_TOKEN",
		Found: domain.LookupFound{Status: []int{200}, Ref: "/id", Key: "/external_id"}, NotFoundStatus: []int{404}, Window: 20 * time.Second}
	down := list
	down.Name = "crm.down"
	a := *list.LookupAdapter
	a.URL, a.Window = "http://127.0.0.1:1/v1/records?external_id={provider_key}", 0
	down.LookupAdapter = &a
	return domain.Cards{list.Name: list, get.Name: get, down.Name: down}
}

var lookupWorkflow = domain.Actor{Kind: domain.ActorWorkflow, Name: "w", Namespace: "ns"}
var lookupAdmin = domain.Actor{Kind: domain.ActorPerson, Name: "ada", Email: "ada@example.com", Role: domain.RoleAdmin}

// timedOut registers an operation, begins it and settles it as a timeout;
// executed, if set, are the params the provider executed it with first.
func (r *lookupRig) timedOut(key, typ string, executed map[string]any) domain.Operation {
	r.t.Helper()
	res, err := r.ledger.Workflow.Register(r.ctx, lookupWorkflow, domain.Registration{Key: key, Type: typ,
		Content: json.RawMessage(`{"subject":"call back"}`), Claim: &domain.Claim{Worker: "w-1"}})
	if err != nil {
		r.t.Fatal(err)
	}
	op := res.Operation
	if _, err := r.ledger.Workflow.Begin(r.ctx, lookupWorkflow, op.ID, domain.Begin{LeaseToken: res.Claim.Lease.Token}); err != nil {
		r.t.Fatal(err)
	}
	if executed != nil {
		body, _ := json.Marshal(map[string]any{"key": op.ProviderKey, "params": executed})
		resp, err := http.Post(r.srv.URL+"/execute", "application/json", bytes.NewReader(body))
		if err != nil {
			r.t.Fatal(err)
		}
		resp.Body.Close()
	}
	got, err := r.ledger.Workflow.Settle(r.ctx, lookupWorkflow, op.ID, domain.Settle{LeaseToken: res.Claim.Lease.Token, Outcome: domain.OutcomeUnknown,
		Error: &domain.ErrorInfo{Class: domain.ClassTimeout, Code: "timeout", Message: "no answer within 10s"}})
	if err != nil {
		r.t.Fatal(err)
	}
	if got.State != domain.UnknownOutcome || got.DeskEnteredAt != nil {
		r.t.Fatalf("after the timeout: %s, desk entered %v; want unknown_outcome awaiting the lookup", got.State, got.DeskEnteredAt)
	}
	return got
}

func (r *lookupRig) lookuper(allowPrivate bool) *reconcile.Lookuper {
	getenv := func(k string) string {
		if k == "CRM_TOKEN" {
			return lookupSecret
		}
		return ""
	}
	log := slog.New(slog.NewTextHandler(lockedWriter{&r.logMu, r.logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return &reconcile.Lookuper{Ledger: r.ledger.Upkeep, Store: r.st, Looker: lookup.New(allowPrivate, getenv), Types: r.ledger.Cards.LookupTypes(),
		Backoff: 5 * time.Second, Now: r.Now, Log: log}
}

func (r *lookupRig) pass(l *reconcile.Lookuper, want int) {
	r.t.Helper()
	n, err := l.Pass(r.ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	if n != want {
		r.t.Fatalf("a pass made %d lookups, want %d", n, want)
	}
}

func (r *lookupRig) get(id string) domain.Operation {
	r.t.Helper()
	op, err := r.ledger.Workflow.Get(r.ctx, lookupAdmin, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return op
}

func (r *lookupRig) last(id string) domain.AuditEvent {
	r.t.Helper()
	events, err := r.ledger.Workflow.Timeline(r.ctx, lookupAdmin, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return events[len(events)-1]
}

func (r *lookupRig) notifications(id string) []domain.NotificationRecord {
	r.t.Helper()
	ns, err := r.ledger.Outbox.Notifications(r.ctx, lookupAdmin, id)
	if err != nil {
		r.t.Fatal(err)
	}
	return ns
}

// TestLookupSettlesATimeoutTheProviderExecuted: the provider executed, the
// answer was lost; one pass finds the record and completes the operation
// as the system, with the evidence — no desk entry, no notification.
func TestLookupSettlesATimeoutTheProviderExecuted(t *testing.T) {
	r := newLookupRig(t, sandbox.Config{})
	op := r.timedOut("evt_1:crm", "crm.list", map[string]any{"subject": "call back"})
	r.pass(r.lookuper(true), 1)

	got := r.get(op.ID)
	ref := r.sbx.History(op.ProviderKey)[0].Ref
	if got.State != domain.Completed || got.Result == nil || got.Result.Ref != ref || got.DeskEnteredAt != nil {
		t.Fatalf("after one pass: %s result %+v desk %v; want completed with %s, never on the desk", got.State, got.Result, got.DeskEnteredAt, ref)
	}
	ev := r.last(op.ID)
	if ev.Action != domain.ActionLookedUp || ev.Actor.Kind != domain.ActorSystem || !strings.Contains(string(ev.Detail), "looked up 1×") ||
		!strings.Contains(string(ev.Detail), "/v1/records?external_id="+op.ProviderKey) {
		t.Fatalf("last event %s by %s: %s", ev.Action, ev.Actor.Kind, ev.Detail)
	}
	if ns := r.notifications(op.ID); len(ns) != 0 {
		t.Fatalf("%d notifications; a lookup that settles must wake nobody", len(ns))
	}
	if n := r.sbx.Lookups(op.ProviderKey); n != 1 {
		t.Fatalf("the CRM was asked %d times, want 1", n)
	}
	if a, _ := r.auth.Load().(string); a != "Bearer "+lookupSecret {
		t.Fatalf("the CRM saw Authorization %q", a)
	}
	r.pass(r.lookuper(true), 0) // nothing left to look up
}

// TestLookupFindsALaggingIndexOnTheSecondTry: the list misses the record
// on the first read; the operation waits (not on the desk, no
// notification) and the second try, after the backoff, settles it.
func TestLookupFindsALaggingIndexOnTheSecondTry(t *testing.T) {
	r := newLookupRig(t, sandbox.Config{IndexLagReads: 1})
	op := r.timedOut("evt_2:crm", "crm.list", map[string]any{"subject": "call back"})
	l := r.lookuper(true)
	r.pass(l, 1)
	if got := r.get(op.ID); got.State != domain.UnknownOutcome || got.DeskEnteredAt != nil || len(r.notifications(op.ID)) != 0 {
		t.Fatalf("after a miss inside the window: %s desk %v", got.State, got.DeskEnteredAt)
	}
	r.pass(l, 0) // not due before the backoff
	r.advance(5 * time.Second)
	r.pass(l, 1)
	got := r.get(op.ID)
	if got.State != domain.Completed || len(r.notifications(op.ID)) != 0 {
		t.Fatalf("after the second try: %s", got.State)
	}
	if ev := r.last(op.ID); !strings.Contains(string(ev.Detail), "looked up 2×") || !strings.Contains(string(ev.Detail), "200 not_found: /data is empty / 200 found sbx_") {
		t.Fatalf("evidence: %s", ev.Detail)
	}
	if n := r.sbx.Lookups(op.ProviderKey); n != 2 {
		t.Fatalf("the CRM was asked %d times, want 2", n)
	}
}

// TestLookupAuthoritativeNotFoundRetriesUnderTheSameKey: a record by ID
// that stays 404 for the whole window proves nothing happened: the card's
// retry, under the same provider key; a person is not asked.
func TestLookupAuthoritativeNotFoundRetriesUnderTheSameKey(t *testing.T) {
	r := newLookupRig(t, sandbox.Config{})
	op := r.timedOut("evt_3:crm", "crm.get", nil)
	l := r.lookuper(true)
	for _, wait := range []time.Duration{0, 5 * time.Second, 10 * time.Second, 20 * time.Second} {
		r.advance(wait)
		r.pass(l, 1)
	}
	// The window is over but the call's deadline (begin + twice the 30s
	// lease) is not: the call may still land, so nothing is concluded yet.
	if got := r.get(op.ID); got.State != domain.UnknownOutcome || got.DeskEnteredAt != nil {
		t.Fatalf("after the window, before the call's deadline: %s desk %v", got.State, got.DeskEnteredAt)
	}
	for _, wait := range []time.Duration{40 * time.Second, 6 * time.Second} { // then at the deadline + the window (80s)
		r.advance(wait)
		r.pass(l, 1)
	}
	got := r.get(op.ID)
	if got.State != domain.FailedRetryable || got.LastError == nil || got.LastError.Code != "not_found_at_provider" || got.DeskEnteredAt != nil {
		t.Fatalf("after the window: %s %+v", got.State, got.LastError)
	}
	if ev := r.last(op.ID); ev.Action != domain.ActionLookupNotFound || !strings.Contains(string(ev.Detail), "looked up 6×") {
		t.Fatalf("last event %s: %s", ev.Action, ev.Detail)
	}
	if len(r.notifications(op.ID)) != 0 {
		t.Fatal("an authoritative not-found woke someone")
	}
	time.Sleep(1100 * time.Millisecond) // the card's backoff, on the store's clock
	claimed, err := r.ledger.Workflow.Claim(r.ctx, lookupWorkflow, op.ID, domain.Claim{Worker: "w-2"})
	if err != nil {
		t.Fatal(err)
	}
	if claimed.Operation.ProviderKey != op.ProviderKey || claimed.Operation.Attempts != 2 {
		t.Fatalf("retried with provider key %q (attempt %d), want %q", claimed.Operation.ProviderKey, claimed.Operation.Attempts, op.ProviderKey)
	}
}

// TestLookupHandsTheRestToTheDeskWithEvidence: an unsure not-found after
// the window, a lookup that cannot reach the provider, and a record under
// the key with other content each go to the desk — desk clock started,
// handed_off notification written — with the lookup's evidence as the
// item's last error.
func TestLookupHandsTheRestToTheDeskWithEvidence(t *testing.T) {
	r := newLookupRig(t, sandbox.Config{})
	unsure := r.timedOut("evt_4:crm", "crm.list", nil)
	down := r.timedOut("evt_5:crm", "crm.down", map[string]any{"subject": "call back"})
	conflict := r.timedOut("evt_6:crm", "crm.list", map[string]any{"subject": "someone else's task"})
	l := r.lookuper(true)
	r.pass(l, 3) // down and conflict conclude at once; unsure looks again

	cases := []struct {
		op   domain.Operation
		want string
	}{
		{down, "looked up 1×"},
		{conflict, "200 conflict sbx_2 (differs: /data/0/params/subject)"},
	}
	if got := r.get(unsure.ID); got.DeskEnteredAt != nil {
		t.Fatal("an unsure not-found went to the desk inside the window")
	}
	for _, wait := range []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 40 * time.Second, 45 * time.Second} {
		r.advance(wait)
		r.pass(l, 1)
	}
	cases = append(cases, struct {
		op   domain.Operation
		want string
	}{unsure, "looked up 6×"})
	for _, c := range cases {
		got := r.get(c.op.ID)
		if got.State != domain.UnknownOutcome || got.DeskEnteredAt == nil || got.LastError == nil || !strings.Contains(got.LastError.Message, c.want) {
			t.Fatalf("%s: %s desk %v error %+v; want on the desk with %q", c.op.Type, got.State, got.DeskEnteredAt, got.LastError, c.want)
		}
		if ev := r.last(c.op.ID); ev.Action != domain.ActionLookupInconclusive || ev.Actor.Kind != domain.ActorSystem {
			t.Fatalf("%s: last event %s", c.op.Type, ev.Action)
		}
		var ns []domain.NotificationRecord // the item's own, not its incident's (incident_entry.go)
		for _, n := range r.notifications(c.op.ID) {
			if n.Summary.Incident == nil {
				ns = append(ns, n)
			}
		}
		if len(ns) != 1 || ns[0].Type != domain.NotifyHandedOff {
			t.Fatalf("%s: %d notifications, want one handed_off", c.op.Type, len(ns))
		}
	}
	if msg := r.get(down.ID).LastError.Message; !strings.Contains(msg, "error: ") {
		t.Fatalf("the unreachable provider's evidence: %q", msg)
	}
	if msg := r.get(unsure.ID).LastError.Message; strings.Count(msg, "200 not_found") != 6 {
		t.Fatalf("the unsure not-found's evidence: %q", msg)
	}
	r.pass(l, 0)
}

// TestLookupRefusesAPrivateAddress: without HANDOFF_LOOKUP_ALLOW_PRIVATE
// a lookup URL resolving to loopback is refused at connect time, as a
// notification would be; the provider is never asked and a person decides.
func TestLookupRefusesAPrivateAddress(t *testing.T) {
	r := newLookupRig(t, sandbox.Config{})
	op := r.timedOut("evt_7:crm", "crm.down", nil)
	r.pass(r.lookuper(false), 1)
	got := r.get(op.ID)
	if got.DeskEnteredAt == nil || !strings.Contains(got.LastError.Message, "destination refused") {
		t.Fatalf("%s desk %v: %+v", got.State, got.DeskEnteredAt, got.LastError)
	}
	r2 := newLookupRig(t, sandbox.Config{})
	op2 := r2.timedOut("evt_8:crm", "crm.list", map[string]any{"subject": "call back"})
	r2.pass(r2.lookuper(false), 1)
	if r2.sbx.Lookups(op2.ProviderKey) != 0 {
		t.Fatal("the guard let a lookup reach a loopback provider")
	}
	ls, err := r2.st.LookupsOf(r2.ctx, op2.ID)
	if err != nil || len(ls) != 1 || len(ls[0].Tries) != 1 || !strings.Contains(ls[0].Tries[0].Error, "destination refused") {
		t.Fatalf("the try inside the window: %+v %v", ls, err)
	}
}

// TestLookupOncePerTryOnThreeReplicas: three reconcilers pass at once over
// operations whose index lags one read; each operation's provider is
// asked exactly twice — once per try — and each is completed once.
func TestLookupOncePerTryOnThreeReplicas(t *testing.T) {
	r := newLookupRig(t, sandbox.Config{IndexLagReads: 1})
	const n = 12
	var ops []domain.Operation
	for i := range n {
		ops = append(ops, r.timedOut(fmt.Sprintf("evt_r%d:crm", i), "crm.list", map[string]any{"subject": "call back"}))
	}
	r.delay.Store(int64(30 * time.Millisecond)) // passes overlap while answers are awaited
	replicas := []*reconcile.Lookuper{r.lookuper(true), r.lookuper(true), r.lookuper(true)}
	for _, l := range replicas {
		l.Batch = 5
	}
	for round := range 2 {
		var wg sync.WaitGroup
		for _, l := range replicas {
			wg.Go(func() {
				for range 6 { // more passes than the work needs, each replica at its own pace
					if _, err := l.Pass(r.ctx); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		if round == 0 {
			r.advance(5 * time.Second)
		}
	}
	for _, op := range ops {
		if got := r.sbx.Lookups(op.ProviderKey); got != 2 {
			t.Errorf("%s: the provider was asked %d times, want 2 (one per try)", op.Key, got)
		}
		if got := r.get(op.ID); got.State != domain.Completed {
			t.Errorf("%s: %s", op.Key, got.State)
		}
		events, _ := r.ledger.Workflow.Timeline(r.ctx, lookupAdmin, op.ID)
		looked := 0
		for _, e := range events {
			if e.Action == domain.ActionLookedUp {
				looked++
			}
		}
		if looked != 1 {
			t.Errorf("%s: %d looked_up events", op.Key, looked)
		}
	}
}

// TestLookupLateCallIsNotSentAgain: a worker's lease lapses after begin
// while its call to the provider is still in flight; the sweeper hands the
// operation to the lookup at once and the provider has no record yet. On
// an authoritative card with no window that not-found must not send the
// operation back to retry: the call lands after the first lookup, and the
// look again at the call's deadline finds it and completes the operation.
// The provider executes once.
func TestLookupLateCallIsNotSentAgain(t *testing.T) {
	r := newLookupRig(t, sandbox.Config{})
	card := r.ledger.Cards["crm.get"]
	card.Name = "crm.get.nowindow"
	a := *card.LookupAdapter
	a.Window = 0
	card.LookupAdapter = &a
	r.ledger.Cards[card.Name] = card

	res, err := r.ledger.Workflow.Register(r.ctx, lookupWorkflow, domain.Registration{Key: "evt_late:crm", Type: card.Name,
		Content: json.RawMessage(`{"subject":"call back"}`), Claim: &domain.Claim{Worker: "w-1", Lease: 2 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	op := res.Operation
	if _, err := r.ledger.Workflow.Begin(r.ctx, lookupWorkflow, op.ID, domain.Begin{LeaseToken: res.Claim.Lease.Token}); err != nil {
		t.Fatal(err)
	}
	// The lease outlasts Begin even on a loaded machine; then it lapses,
	// the worker's call still in flight.
	time.Sleep(2500 * time.Millisecond)
	if _, err := r.ledger.Upkeep.Sweep(r.ctx, 10); err != nil {
		t.Fatal(err)
	}
	if got := r.get(op.ID); got.State != domain.UnknownOutcome || got.DeskEnteredAt != nil {
		t.Fatalf("after the sweep: %s desk %v; want unknown_outcome awaiting the lookup", got.State, got.DeskEnteredAt)
	}
	l := r.lookuper(true)
	r.pass(l, 1) // at once: the provider has no record yet
	if got := r.get(op.ID); got.State != domain.UnknownOutcome || got.DeskEnteredAt != nil {
		t.Fatalf("after a not-found before the call's deadline: %s desk %v %+v; want still awaiting the lookup", got.State, got.DeskEnteredAt, got.LastError)
	}
	if _, err := r.ledger.Workflow.Claim(r.ctx, lookupWorkflow, op.ID, domain.Claim{Worker: "w-2"}); domain.ErrorCode(err) != domain.ENotClaimable {
		t.Fatalf("a claim before the call's deadline: %v; want not claimable", err)
	}

	body, _ := json.Marshal(map[string]any{"key": op.ProviderKey, "params": map[string]any{"subject": "call back"}})
	resp, err := http.Post(r.srv.URL+"/execute", "application/json", bytes.NewReader(body)) // the late call lands
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	for range 8 { // the looks inside the call's deadline (twice the card's 30s lease), then the one at it
		r.advance(10 * time.Second)
		if _, err := l.Pass(r.ctx); err != nil {
			t.Fatal(err)
		}
		if r.get(op.ID).State != domain.UnknownOutcome {
			break
		}
	}
	got := r.get(op.ID)
	ref := r.sbx.History(op.ProviderKey)[0].Ref
	if got.State != domain.Completed || got.Result == nil || got.Result.Ref != ref || got.DeskEnteredAt != nil {
		t.Fatalf("after the call's deadline: %s %+v desk %v; want completed with %s", got.State, got.Result, got.DeskEnteredAt, ref)
	}
	if n := r.sbx.Executions(op.ProviderKey); n != 1 {
		t.Fatalf("the provider executed %d times, want 1", n)
	}
	if ev := r.last(op.ID); ev.Action != domain.ActionLookedUp || !strings.Contains(string(ev.Detail), "404 not_found") {
		t.Fatalf("last event %s: %s; want looked_up with the early not-found in its evidence", ev.Action, ev.Detail)
	}
}

// TestReconcileNotFoundWaitsForTheCallDeadline: the workflow's own lookup
// reported through Ledger.Reconcile is held to the same deadline as
// Handoff's: an authoritative not-found right after a timeout leaves the
// operation unknown_outcome (the call may still land); nothing is retried.
func TestReconcileNotFoundWaitsForTheCallDeadline(t *testing.T) {
	r := newLookupRig(t, sandbox.Config{})
	op := r.timedOut("evt_rec:crm", "crm.get", nil)
	got, err := r.ledger.Workflow.Reconcile(r.ctx, lookupWorkflow, op.ID, domain.Reconcile{Evidence: "GET /records/" + op.ProviderKey + " → 404"})
	if err != nil {
		t.Fatal(err)
	}
	if got.State != domain.UnknownOutcome {
		t.Fatalf("a not-found right after begin: %s; want unknown_outcome until the call's deadline", got.State)
	}
	if ev := r.last(op.ID); ev.Action != "reconcile_inconclusive" || !strings.Contains(string(ev.Detail), `"not_before"`) {
		t.Fatalf("last event %s: %s", ev.Action, ev.Detail)
	}
}

// TestLookupALyingAdapterCompletesNothing: a provider that answers
// {"data":[{"id":"LIE-1"}]} to every query. An adapter that binds a found
// to the operation (found.key, or a compare rule) reads it as a record
// that is not this operation's; one with no binding (refused by cards
// check, but loaded here unchecked) reads a found that nothing ties to the
// operation. None completes: each of the ten unknown outcomes is on the
// desk with the lie as evidence.
func TestLookupALyingAdapterCompletesNothing(t *testing.T) {
	r := newLookupRig(t, sandbox.Config{})
	liar := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"data":[{"id":"LIE-1"}]}`))
	}))
	t.Cleanup(liar.Close)
	cs := lookupCards(r.srv.URL)
	lying := func(name string, found domain.LookupFound) {
		c := cs["crm.list"]
		c.Name = name
		c.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: liar.URL + "/v1/records?external_id={provider_key}",
			Found: found, NotFoundStatus: []int{404}}
		cs[name] = c
	}
	lying("lie.unbound", domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", WhenNonempty: "/data"})
	lying("lie.key", domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", WhenNonempty: "/data", Key: "/data/0/external_id"})
	lying("lie.compare", domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", WhenNonempty: "/data",
		Compare: []domain.LookupCompare{{Answer: "/data/0/subject", Content: "/subject"}}})
	if errs := cs["lie.unbound"].Validate(); len(errs) != 1 || errs[0].Field != "lookup_adapter.found" {
		t.Fatalf("cards check would load the unbound adapter: %v", errs)
	}
	r.ledger = domain.NewLedger(r.st, cs)
	var ops []domain.Operation
	for i := range 10 {
		typ := []string{"lie.unbound", "lie.key", "lie.compare"}[i%3]
		ops = append(ops, r.timedOut(fmt.Sprintf("evt_lie_%d:crm", i), typ, nil))
	}
	l := r.lookuper(true)
	l.Types = []string{"lie.compare", "lie.key", "lie.unbound"}
	r.pass(l, 10) // no window: each concludes on its first look
	for _, op := range ops {
		got := r.get(op.ID)
		if got.State == domain.Completed || got.Result != nil {
			t.Fatalf("%s (%s): %s with %+v; a record nothing ties to the operation completed it", op.ID, op.Type, got.State, got.Result)
		}
		if got.State != domain.UnknownOutcome || got.DeskEnteredAt == nil || got.LastError == nil || !strings.Contains(got.LastError.Message, "LIE-1") {
			t.Fatalf("%s (%s): %s desk %v error %+v; want on the desk with the lie as evidence", op.ID, op.Type, got.State, got.DeskEnteredAt, got.LastError)
		}
	}
	r.pass(l, 0)
}
