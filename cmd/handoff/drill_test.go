package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/cards"
	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/drill"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// drillRig is an embedded Handoff on the test's database (SQLite, or
// PostgreSQL when HANDOFF_TEST_POSTGRES is set) with the cards synced and
// stamped, as `handoff drill` runs it.
type drillRig struct {
	t     *testing.T
	store *store.Store
	cards domain.Cards
	opts  drill.Options
	dir   string
}

func newDrillRig(t *testing.T, cs domain.Cards) *drillRig {
	t.Helper()
	ctx := context.Background()
	s := storetest.New(t)
	versions, err := s.SyncCards(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	stampCards(cs, versions)
	emb, err := startEmbedded(ctx, s, cs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	return &drillRig{t: t, store: s, cards: cs, dir: t.TempDir(),
		opts: drill.Options{Workflow: emb.Workflow, Namespace: emb.Namespace, Operator: emb.Operator, Approver: emb.Approver, Notes: emb.Notes,
			LookupRoute: emb.LookupRoute, ExecuteRoute: emb.ExecuteRoute,
			HandoffVersion: "test", RanBy: "drill-test", MaxWait: 20 * time.Second}}
}

// drill drills the named types (all when none) and answers the receipts
// as read back from their files, with drillAndRecord's error.
func (r *drillRig) drill(names ...string) (map[string]drill.Receipt, error) {
	r.t.Helper()
	ctx := context.Background()
	list, err := drill.Types(ctx, r.opts.Workflow)
	if err != nil {
		r.t.Fatal(err)
	}
	if len(names) > 0 {
		var keep []drill.Card
		for _, n := range names {
			keep = append(keep, filterTypes(list, n)...)
		}
		list = keep
	}
	recs, err := drillAndRecord(ctx, recordIn(r.store), r.opts, list, r.dir, io.Discard)
	out := map[string]drill.Receipt{}
	for _, rec := range recs {
		raw, rerr := os.ReadFile(filepath.Join(r.dir, rec.ID+".json"))
		if rerr != nil {
			r.t.Fatal(rerr)
		}
		back, perr := drill.Parse(raw)
		if perr != nil {
			r.t.Fatal(perr)
		}
		if _, serr := os.Stat(filepath.Join(r.dir, rec.ID+".md")); serr != nil {
			r.t.Fatalf("no Markdown beside the receipt: %v", serr)
		}
		out[back.Type] = back
	}
	return out, err
}

func exampleCards(t *testing.T) domain.Cards {
	t.Helper()
	cs, err := cards.Examples()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func cardsFrom(t *testing.T, yaml string) domain.Cards {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cards.yaml")
	if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := cards.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func caseOf(t *testing.T, rec drill.Receipt, n int) drill.CaseResult {
	t.Helper()
	for _, c := range rec.Cases {
		if c.Number == n {
			return c
		}
	}
	t.Fatalf("%s: no case %d in the receipt", rec.Type, n)
	return drill.CaseResult{}
}

func TestDrill_PassesOnEveryExampleCard(t *testing.T) {
	cs := exampleCards(t)
	rig := newDrillRig(t, cs)
	recs, err := rig.drill()
	if err != nil {
		for _, rec := range recs {
			t.Log(rec.Markdown(""))
		}
		t.Fatal(err)
	}
	if len(recs) != len(cs) {
		t.Fatalf("%d receipts for %d example cards", len(recs), len(cs))
	}
	for name, rec := range recs {
		card := cs[name]
		if rec.Verdict != drill.VerdictPass || len(rec.Cases) != 17 {
			t.Fatalf("%s: verdict %s with %d cases\n%s", name, rec.Verdict, len(rec.Cases), rec.Markdown(""))
		}
		if rec.Card.Version != card.Version || rec.Card.SHA256 != card.SHA256 || rec.Card.SHA256 == "" || rec.RanBy != "drill-test" || rec.HandoffVersion != "test" {
			t.Fatalf("%s: receipt names card %+v, ran by %q, want version %d sha %s", name, rec.Card, rec.RanBy, card.Version, card.SHA256)
		}
		if rec.StartedAt.IsZero() || rec.FinishedAt.Before(rec.StartedAt) {
			t.Fatalf("%s: times %s – %s", name, rec.StartedAt, rec.FinishedAt)
		}
		dedupes := card.DedupesByKey()
		// The system re-sends a lost answer only where the card's contract
		// is known and Handoff is the layer that retries.
		autoResends := dedupes && card.AutoResendOff() == "" && card.Retrier() == domain.RetryByHandoff
		for _, c := range rec.Cases {
			if c.Verdict != drill.VerdictPass && c.Verdict != drill.VerdictNotApplicable {
				t.Fatalf("%s case %d: %s: %s", name, c.Number, c.Verdict, c.Explanation)
			}
			if c.Verdict == drill.VerdictPass && (len(c.Steps) == 0 || c.Expected == "") {
				t.Fatalf("%s case %d passed without steps or expectation: %+v", name, c.Number, c)
			}
		}
		// Case by case, what the card says must have happened.
		for _, n := range []int{1, 2, 6, 10} {
			c := caseOf(t, rec, n)
			if c.Executions != 1 || c.State != "completed" || c.StoredResultMatch == nil || !*c.StoredResultMatch {
				t.Fatalf("%s case %d: want completed once with the stored result, got %+v", name, n, c)
			}
		}
		if c := caseOf(t, rec, 1); len(c.ProviderAnswers) != 1 {
			t.Fatalf("%s case 1: the second delivery must not reach the provider: %v", name, c.ProviderAnswers)
		}
		c3 := caseOf(t, rec, 3)
		if card.Retry.MaxAttempts > 1 && (c3.State != "completed" || c3.Executions != 1 || c3.Retries != 1 || !*c3.StoredResultMatch) {
			t.Fatalf("%s case 3: after the crash a second worker completes it once, got %+v", name, c3)
		}
		if card.Retry.MaxAttempts == 1 && (c3.State != "failed_terminal" || c3.Executions != 0) {
			t.Fatalf("%s case 3: the crash spent the only attempt, nothing was sent, got %+v", name, c3)
		}
		if c := caseOf(t, rec, 7); c.Executions != 0 || c.State != "failed_terminal" {
			t.Fatalf("%s case 7: a loop must never execute: %+v", name, c)
		}
		c4 := caseOf(t, rec, 4)
		// A lost answer ends in unknown_outcome — unless Handoff re-sends it
		// automatically (the provider deduplicates, nothing turns that off) or
		// Handoff's own lookup finds the record.
		settledByLookup := !autoResends && card.LookupAdapter != nil
		if want := map[bool]string{true: "completed", false: "unknown_outcome"}[autoResends || settledByLookup]; c4.State != want || c4.Executions != 1 ||
			settledByLookup != (c4.SettledBy == drill.SettledByLookup) {
			t.Fatalf("%s case 4: want %s with 1 execution (settled by lookup %t), got %+v", name, want, settledByLookup, c4)
		}
		c5 := caseOf(t, rec, 5)
		if want := map[bool]int{true: 2, false: 1}[card.IsRetryable(domain.ClassRateLimited) && card.Retry.MaxAttempts > 1]; c5.Executions != want {
			t.Fatalf("%s case 5: want %d executions across the two actions, got %+v", name, want, c5)
		}
		for _, n := range []int{11, 12} {
			c := caseOf(t, rec, n)
			if !dedupes || n == 12 && !autoResends {
				if c.Verdict != drill.VerdictNotApplicable {
					t.Fatalf("%s case %d applies only to a deduplicating provider: %+v", name, n, c)
				}
				continue
			}
			if c.Executions != 1 {
				t.Fatalf("%s case %d: want 1 execution, got %+v", name, n, c)
			}
		}
		if c := caseOf(t, rec, 11); dedupes && c.State != "unknown_outcome" {
			t.Fatalf("%s case 11: past retention the key is not relied on, got %+v", name, c)
		}
		if c := caseOf(t, rec, 12); autoResends && (c.State != "completed" || !*c.StoredResultMatch) {
			t.Fatalf("%s case 12: inside retention the resend answers the stored result, got %+v", name, c)
		}
		for _, n := range []int{8, 9} {
			c := caseOf(t, rec, n)
			if c.Executions != 1 {
				t.Fatalf("%s case %d: want 1 execution, got %+v", name, n, c)
			}
		}
		if c := caseOf(t, rec, 8); c.State != "completed" {
			t.Fatalf("%s case 8: the found record completes it, got %+v", name, c)
		}
		// Cases 8 and 9 crash after the provider call. Where the provider
		// deduplicates the key and an attempt remains, the system policy
		// re-sends the lost lease under the same key instead of asking a
		// lookup: the provider's first answer completes it.
		resent := autoResends && card.ProviderKeyRetention > 0 && card.Retry.MaxAttempts > 1
		for _, n := range []int{8, 9} {
			if c := caseOf(t, rec, n); resent && (c.State != "completed" || c.StoredResultMatch == nil || !*c.StoredResultMatch ||
				!strings.Contains(strings.Join(c.Steps, "\n"), "resend_within_retention")) {
				t.Fatalf("%s case %d: the lost lease is re-sent and completes with the stored result, got %+v", name, n, c)
			}
		}
		if c := caseOf(t, rec, 9); !resent && card.DrillLookup() == "unsure" && c.State != "unknown_outcome" {
			t.Fatalf("%s case 9: an unsure lookup leaves it to a person, got %+v", name, c)
		}
		// Case 17: the call lands after the first lookup; executed once, and
		// found by a later look wherever there is a lookup.
		c17 := caseOf(t, rec, 17)
		if want := map[bool]string{true: "completed", false: "unknown_outcome"}[card.Lookup != domain.LookupNone || resent]; c17.Executions != 1 ||
			c17.State != want || (card.LookupAdapter != nil && !resent) != (c17.SettledBy == drill.SettledByLookup) {
			t.Fatalf("%s case 17: want %s with 1 execution after the late call, got %+v", name, want, c17)
		}
		// A card with a lookup_adapter: Handoff itself looked cases 8 and
		// 9 up (9 through a lagging index, found on a later try), and the
		// receipt says they were settled by the lookup.
		for _, n := range []int{8, 9} {
			c := caseOf(t, rec, n)
			byLookup := card.LookupAdapter != nil && !resent
			if byLookup != (c.SettledBy == drill.SettledByLookup) || (byLookup && c.State != "completed") {
				t.Fatalf("%s case %d: adapter %t, settled by %q in %s: %+v", name, n, card.LookupAdapter != nil, c.SettledBy, c.State, c)
			}
			if byLookup && n == 9 && !strings.Contains(strings.Join(c.ProviderAnswers, "\n"), "200 not_found") {
				t.Fatalf("%s case 9: the lagging index should have missed the first try: %v", name, c.ProviderAnswers)
			}
			if byLookup && !strings.Contains(rec.Markdown(""), "settled by Handoff's own lookup, no person asked: case 4, 8, 9") {
				t.Fatalf("%s: the receipt does not say which outcomes the lookup settled:\n%s", name, rec.Markdown(""))
			}
		}
		// The receipt verifies against its audit event.
		if _, err := verifyReceipt(context.Background(), rig.store, filepath.Join(rig.dir, rec.ID+".json")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}

func TestDrill_FailsLoudlyWhenTheCardLies(t *testing.T) {
	rig := newDrillRig(t, cardsFrom(t, `
- name: liar.dedupe
  provider: sandboxed
  provider_idempotency: key
  provider_key_retention: 24h
  retry: {max_attempts: 3, backoff: 1s}
  retryable: [transient, rate_limited]
  drill: {adapter: sandbox, idempotency: none}
- name: liar.timeout
  provider: sandboxed
  provider_idempotency: none
  retry: {max_attempts: 3, backoff: 1s}
  retryable: [transient, rate_limited, timeout]
  retry_layer: worker
  drill: {adapter: sandbox}
`))
	recs, err := rig.drill()
	if err == nil || !strings.Contains(err.Error(), "liar.dedupe: fail") || !strings.Contains(err.Error(), "liar.timeout: fail") {
		t.Fatalf("want the drill to fail on both cards, got %v", err)
	}
	// The card claims key deduplication; the sandbox does not dedupe: the
	// resend inside retention executed twice.
	dedupe := recs["liar.dedupe"]
	c12 := caseOf(t, dedupe, 12)
	if dedupe.Verdict != drill.VerdictFail || c12.Verdict != drill.VerdictFail || c12.Executions != 2 ||
		!strings.Contains(c12.Explanation, "DUPLICATE EXECUTION") || !strings.Contains(c12.Explanation, "provider_idempotency: key") {
		t.Fatalf("case 12 should fail on the duplicate, got %+v", c12)
	}
	// The card lets the worker retry timeouts on a provider that does not
	// dedupe: the lost answer is retried and executes twice.
	timeout := recs["liar.timeout"]
	c4 := caseOf(t, timeout, 4)
	if timeout.Verdict != drill.VerdictFail || c4.Verdict != drill.VerdictFail || c4.Executions != 2 || c4.Retries < 1 ||
		!strings.Contains(c4.Explanation, "DUPLICATE EXECUTION") || !strings.Contains(c4.Explanation, "timeout as retryable") ||
		len(c4.ProviderAnswers) != 2 {
		t.Fatalf("case 4 should show the duplicate execution, got %+v", c4)
	}
	// Failing receipts are stored and verifiable too.
	for _, rec := range recs {
		if _, err := verifyReceipt(context.Background(), rig.store, filepath.Join(rig.dir, rec.ID+".json")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDrill_RefusesATypeWithoutASandboxAdapter(t *testing.T) {
	rig := newDrillRig(t, cardsFrom(t, `
- name: live.charge
  provider: payments
  provider_idempotency: none
  retry: {max_attempts: 1, backoff: 1s}
  drill: {adapter: live}
- name: unset.charge
  provider: payments
  provider_idempotency: none
  retry: {max_attempts: 1, backoff: 1s}
`))
	recs, err := rig.drill()
	if !errors.Is(err, drill.ErrNotSandbox) && (err == nil || !strings.Contains(err.Error(), "not a sandbox adapter")) {
		t.Fatalf("want a refusal, got %v", err)
	}
	if len(recs) != 0 || !strings.Contains(err.Error(), "live.charge") || !strings.Contains(err.Error(), "unset.charge") {
		t.Fatalf("both types must be refused, nothing drilled: %v, %d receipts", err, len(recs))
	}
	list, err := drill.Types(context.Background(), rig.opts.Workflow)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := drill.Run(context.Background(), rig.opts, filterTypes(list, "live.charge")[0]); !errors.Is(err, drill.ErrNotSandbox) {
		t.Fatalf("drill.Run must refuse too, got %v", err)
	}
	sums, err := rig.store.DrillSummaries(context.Background())
	if err != nil || len(sums) != 0 {
		t.Fatalf("a refused drill stores nothing: %v %v", sums, err)
	}
}

// The command end to end: `handoff drill --type` on an embedded Handoff
// writes and records a receipt; `handoff drill verify` accepts it, and
// refuses it once edited.
func TestDrillCommand_VerifyDetectsAnEditedReceipt(t *testing.T) {
	t.Setenv("HANDOFF_DATABASE_URL", storetest.URL(t))
	t.Setenv("HANDOFF_CARDS", "")
	ctx := context.Background()
	dir := t.TempDir()
	var out, errOut strings.Builder
	if err := run(ctx, []string{"drill", "--type", "email.send", "--receipts", dir, "--by", "alice@example.com"}, &out, &errOut); err != nil {
		t.Fatalf("drill: %v\n%s%s", err, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "PASS email.send") {
		t.Fatalf("output: %s", out.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("want one receipt, got %v", files)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	rec, err := drill.Parse(raw)
	if err != nil || rec.RanBy != "alice@example.com" || rec.Verdict != drill.VerdictPass || rec.HandoffVersion == "" {
		t.Fatalf("receipt %+v %v", rec, err)
	}
	out.Reset()
	if err := run(ctx, []string{"drill", "verify", files[0]}, &out, &errOut); err != nil || !strings.Contains(out.String(), "verified") {
		t.Fatalf("verify: %v %s", err, out.String())
	}
	// The stored receipt matches the hash the audit trail chained for it.
	out.Reset()
	if err := run(ctx, []string{"audit", "verify", "--db"}, &out, &errOut); err != nil || !strings.HasPrefix(out.String(), "ok") {
		t.Fatalf("audit verify --db after a drill: %v\n%s", err, out.String())
	}
	// Someone turns a case's verdict around in the file.
	edited := strings.Replace(string(raw), `"executions": 1`, `"executions": 0`, 1)
	if edited == string(raw) {
		t.Fatal("nothing to edit")
	}
	if err := os.WriteFile(files[0], []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(ctx, []string{"drill", "verify", files[0]}, &out, &errOut)
	if !errors.Is(err, errReceiptEdited) || !strings.Contains(err.Error(), drill.Hash(raw)) || !strings.Contains(err.Error(), rec.ID) {
		t.Fatalf("an edited receipt must fail verification naming the recorded hash, got %v", err)
	}
	// A receipt no audit event knows is refused too.
	forged := strings.Replace(string(raw), rec.ID, "drl_forged", -1)
	p := filepath.Join(dir, "forged.json")
	if err := os.WriteFile(p, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(ctx, []string{"drill", "verify", p}, &out, &errOut); !errors.Is(err, errReceiptEdited) {
		t.Fatalf("a receipt without audit event must fail, got %v", err)
	}
}

// Against a Handoff where the drill has no person's credential, the cases
// needing a decision are skipped and the drill is incomplete, not passed.
func TestDrill_WithoutPeopleIsIncomplete(t *testing.T) {
	rig := newDrillRig(t, exampleCards(t))
	rig.opts.Operator, rig.opts.Approver = nil, nil
	recs, err := rig.drill("email.send")
	if err == nil || !strings.Contains(err.Error(), "email.send: incomplete") {
		t.Fatalf("want an incomplete drill, got %v", err)
	}
	rec := recs["email.send"]
	c10 := caseOf(t, rec, 10)
	if rec.Verdict != drill.VerdictIncomplete || c10.Verdict != drill.VerdictSkipped || !strings.Contains(c10.Explanation, "credential") {
		t.Fatalf("case 10 should be skipped for want of people: %+v", c10)
	}
	sums, err := rig.store.DrillSummaries(context.Background())
	if err != nil || sums["email.send"].Last.Verdict != drill.VerdictIncomplete || sums["email.send"].LastPass != nil {
		t.Fatalf("an incomplete drill is stored, and is no passing drill: %+v %v", sums, err)
	}
}

// `handoff drill --url --token` drills a running Handoff through its API
// alone, with people's tokens for the decisions, and stores the receipt in
// that Handoff's database.
func TestDrillCommand_AgainstARunningHandoff(t *testing.T) {
	dbURL := storetest.URL(t)
	// The drill's own environment names another database (a stray
	// ./handoff.db): the receipt must land at the Handoff it drilled.
	stray := storetest.URL(t)
	t.Setenv("HANDOFF_DATABASE_URL", stray)
	ctx := context.Background()
	s, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cs := exampleCards(t)
	versions, err := s.SyncCards(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	stampCards(cs, versions)
	emb, err := startEmbedded(ctx, s, cs)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	dir := t.TempDir()
	var out, errOut strings.Builder
	err = run(ctx, []string{"drill", "--type", "payment.charge", "--url", emb.URL, "--token", emb.Workflow.Token,
		"--operator-token", emb.Operator.Token, "--approver-token", emb.Approver.Token, "--receipts", dir}, &out, &errOut)
	if err != nil || !strings.Contains(out.String(), "PASS payment.charge") {
		t.Fatalf("drill: %v\n%s", err, out.String())
	}
	sums, err := s.DrillSummaries(ctx)
	if err != nil || sums["payment.charge"].LastPass == nil || !sums["payment.charge"].Drilled(cs["payment.charge"]) {
		t.Fatalf("the passing receipt is stored and names the card as served: %+v %v", sums, err)
	}
	// Its hash is in the drilled Handoff's audit trail, under the drill's token.
	e, found, err := s.DrillAudit(ctx, sums["payment.charge"].LastPass.ID)
	if err != nil || !found || e.Actor.Kind != domain.ActorWorkflow || detailField(e, "sha256") != sums["payment.charge"].LastPass.SHA256 {
		t.Fatalf("drill_recorded at the server: %+v %v %v", e, found, err)
	}
	// The receipt file verifies against the server's audit trail.
	if _, err := verifyReceipt(ctx, s, filepath.Join(dir, sums["payment.charge"].LastPass.ID+".json")); err != nil {
		t.Fatal(err)
	}
	// Without a token the drill does not start.
	if err := run(ctx, []string{"drill", "--url", emb.URL}, &out, &errOut); err == nil || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("want a refusal without --token, got %v", err)
	}
}

// A drill hands off, asks for approval, escalates and resolves on purpose;
// with every type sending notifications to a receiver, the drill's
// operations — in the drill namespace — leave nothing in the outbox, and
// the receipt says so.
func TestDrill_NeverNotifies(t *testing.T) {
	if drill.Namespace != domain.DrillNamespace {
		t.Fatalf("the drill runs in %q, the server spares %q", drill.Namespace, domain.DrillNamespace)
	}
	cs := exampleCards(t).WithDefaultNotify("https://hooks.example.com/handoff")
	rig := newDrillRig(t, cs)
	recs, err := rig.drill("payment.charge", "email.send")
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs {
		if rec.Conditions.Namespace != domain.DrillNamespace || rec.Conditions.Notifications != drill.NoNotifications {
			t.Fatalf("%s: the receipt does not say that nobody was notified: %+v", rec.Type, rec.Conditions)
		}
	}
	dests, err := rig.store.NotificationDestinations(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dests {
		if d.Notifications > 0 {
			t.Fatalf("the drill wrote %d notifications to %s", d.Notifications, d.URL)
		}
	}
}

// `handoff drill --url` with a workflow token of another namespace is
// refused before it registers anything: there its operations would notify
// real people and real workers could claim them.
func TestDrillCommand_RefusesATokenOutsideTheDrillNamespace(t *testing.T) {
	ctx := context.Background()
	s, cs, emb := drillTarget(t)
	var err error
	prod, _, err := auth.NewTokens(s).Create(ctx, "campaigns", "n8n")
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut strings.Builder
	// Whoever creates a drill token is told what the namespace means.
	if err := run(ctx, []string{"token", "create", "--namespace", domain.DrillNamespace, "--name", "drill"}, &out, &errOut); err != nil ||
		!strings.Contains(out.String(), "never notify") {
		t.Fatalf("token create --namespace drill: %v\n%s", err, out.String())
	}
	for _, tok := range []string{prod, "not-a-token"} {
		err = run(ctx, []string{"drill", "--type", "payment.charge", "--url", emb.URL, "--token", tok, "--receipts", t.TempDir()}, &out, &errOut)
		if err == nil {
			t.Fatalf("a drill with token %q ran", tok)
		}
	}
	if !strings.Contains(err.Error(), "not a live workflow token of "+emb.URL) {
		t.Fatalf("an unknown token: %v", err)
	}
	err = run(ctx, []string{"drill", "--type", "payment.charge", "--url", emb.URL, "--token", prod}, &out, &errOut)
	if !errors.Is(err, drill.ErrNotDrillNamespace) || !strings.Contains(err.Error(), `"campaigns"`) {
		t.Fatalf("want a refusal naming the namespace, got %v", err)
	}
	ops, _, err := domain.NewLedger(s, cs).Workflow.List(ctx, domain.Actor{Kind: domain.ActorPerson, Name: "a", Role: domain.RoleAdmin},
		domain.ListQuery{Limit: 10}, "")
	if err != nil || len(ops) != 0 {
		t.Fatalf("a refused drill registered %d operations (%v)", len(ops), err)
	}
}

// TestDrill_FailsACardThatRetriesAPermanentError: a card listing auth as
// retryable fails its drill: the provider refused the request, and every
// retry is refused again.
func TestDrill_FailsACardThatRetriesAPermanentError(t *testing.T) {
	rig := newDrillRig(t, cardsFrom(t, `
- name: retries.auth
  provider: sandboxed
  provider_idempotency: none
  retry: {max_attempts: 3, backoff: 1s}
  retryable: [transient, rate_limited, auth]
  terminal: [validation]
  drill: {adapter: sandbox}
`))
	recs, err := rig.drill()
	if err == nil || !strings.Contains(err.Error(), "retries.auth: fail") {
		t.Fatalf("want the drill to fail, got %v", err)
	}
	rec := recs["retries.auth"]
	if c := caseOf(t, rec, 14); c.Verdict != drill.VerdictFail || !strings.Contains(c.Explanation, "lists auth as retryable") {
		t.Fatalf("case 14 should fail on the retried auth error, got %+v", c)
	}
	if c := caseOf(t, rec, 13); c.Verdict != drill.VerdictPass || c.State != "failed_terminal" || c.Executions != 0 {
		t.Fatalf("case 13: a validation refusal is held without retry, got %+v", c)
	}
}

// TestDrillCommand_WithDrillCredentials: against a Handoff whose people
// have no bearer tokens (a development sign-in), an admin issues two drill
// credentials — an operator and an approver, two people for four eyes —
// and the drill of a type that needs revising and approving passes; its
// receipt is recorded at that Handoff.
func TestDrillCommand_WithDrillCredentials(t *testing.T) {
	ctx := context.Background()
	s, cs, emb := drillTarget(t)
	var err error
	var out, errOut strings.Builder
	creds := map[string]string{}
	for _, role := range []string{"operator", "approver"} {
		out.Reset()
		if err := run(ctx, []string{"token", "create", "--drill-person", role, "--name", "drill-" + role}, &out, &errOut); err != nil {
			t.Fatalf("token create --drill-person %s: %v", role, err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		creds[role] = lines[len(lines)-1]
	}
	out.Reset()
	err = run(ctx, []string{"drill", "--type", "coupon.issue", "--url", emb.URL, "--token", emb.Workflow.Token,
		"--operator-token", creds["operator"], "--approver-token", creds["approver"], "--receipts", t.TempDir()}, &out, &errOut)
	if err != nil || !strings.Contains(out.String(), "PASS coupon.issue") {
		t.Fatalf("drill: %v\n%s", err, out.String())
	}
	sums, err := s.DrillSummaries(ctx)
	if err != nil || !sums["coupon.issue"].Drilled(cs["coupon.issue"]) {
		t.Fatalf("the passing receipt is recorded at the drilled Handoff: %+v %v", sums, err)
	}
	// A drill credential is a person, not a workflow: it cannot register.
	c := client.New(emb.URL, creds["approver"])
	if err := c.Call(ctx, "POST", "/v1/operations", map[string]any{"key": "k", "type": "coupon.issue", "content": map[string]any{}}, nil); !client.IsCode(err, "forbidden") {
		t.Fatalf("a drill credential registered an operation: %v", err)
	}
	// And it is a person only inside the drill namespace: a real workflow's
	// operation is not there for it to read, approve or resolve.
	prod, _, err := auth.NewTokens(s).Create(ctx, "campaigns", "n8n")
	if err != nil {
		t.Fatal(err)
	}
	var real client.Operation
	if err := client.New(emb.URL, prod).Call(ctx, "POST", "/v1/operations", map[string]any{"key": "evt_9:coupon",
		"type": "coupon.issue", "content": map[string]any{"code": "X"}}, &real); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, real.ID); !client.IsCode(err, "not_found") {
		t.Fatalf("a drill credential read another namespace's operation: %v", err)
	}
	err = c.Call(ctx, "POST", "/v1/operations/"+real.ID+"/approve", map[string]any{"content_version": 1, "reason": "ok", "expected_version": real.Version}, nil)
	if !client.IsCode(err, "not_found") {
		t.Fatalf("a drill credential approved another namespace's operation: %v", err)
	}
	var list struct {
		Items []client.Operation `json:"items"`
	}
	if err := c.Call(ctx, "GET", "/v1/operations?limit=200", nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, op := range list.Items {
		if op.ID == real.ID {
			t.Fatalf("a drill credential lists another namespace's operation")
		}
	}
}

// drillTarget is a running Handoff to drill with --url: an embedded one on
// the database HANDOFF_DATABASE_URL names, with the example cards.
func drillTarget(t *testing.T) (*store.Store, domain.Cards, *embeddedHandoff) {
	t.Helper()
	dbURL := storetest.URL(t)
	t.Setenv("HANDOFF_DATABASE_URL", dbURL)
	ctx := context.Background()
	s, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	cs := exampleCards(t)
	versions, err := s.SyncCards(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	stampCards(cs, versions)
	emb, err := startEmbedded(ctx, s, cs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(emb.Close)
	return s, cs, emb
}

// TestDrill_PassesOnACardWithKeyPattern: the drill's keys follow the
// card's key_pattern (the server refuses any other key), so a card with
// one is drilled case by case: one whose pattern fixes the action part
// of an event's keys leaves only the two-action event case not applicable.
func TestDrill_PassesOnACardWithKeyPattern(t *testing.T) {
	cs := exampleCards(t)
	crm, mail := cs["crm.task.create"], cs["email.send"]
	crm.KeyPattern = "^evt_[A-Za-z0-9]+:crm_task$"
	mail.KeyPattern = `^m-[0-9a-f]{6,40}(:[a-z]+)?$`
	cs = domain.Cards{crm.Name: crm, mail.Name: mail}
	rig := newDrillRig(t, cs)
	recs, err := rig.drill()
	if err != nil {
		for _, rec := range recs {
			t.Log(rec.Markdown(""))
		}
		t.Fatal(err)
	}
	for name, rec := range recs {
		if rec.Verdict != drill.VerdictPass || len(rec.Cases) != 17 {
			t.Fatalf("%s: verdict %s with %d cases\n%s", name, rec.Verdict, len(rec.Cases), rec.Markdown(""))
		}
		if !strings.Contains(strings.Join(rec.Conditions.Notes, "\n"), "key_pattern "+cs[name].KeyPattern) {
			t.Fatalf("%s: the receipt does not say its keys follow the pattern: %v", name, rec.Conditions.Notes)
		}
		applicable := 0
		for _, c := range rec.Cases {
			if c.Verdict == drill.VerdictPass {
				applicable++
			}
		}
		if applicable < 10 {
			t.Fatalf("%s: only %d cases ran\n%s", name, applicable, rec.Markdown(""))
		}
	}
	if c := caseOf(t, recs["crm.task.create"], 5); c.Verdict != drill.VerdictNotApplicable || !strings.Contains(c.Explanation, "key_pattern") {
		t.Fatalf("crm case 5: %+v", c)
	}
	if c := caseOf(t, recs["email.send"], 5); c.Verdict != drill.VerdictPass {
		t.Fatalf("email case 5 can make its keys: %+v", c)
	}
	// Each operation the drill registered has a key of the pattern.
	for _, name := range []string{crm.Name, mail.Name} {
		ops, _, err := rig.store.List(context.Background(), domain.ListQuery{Types: []string{name}, Limit: 200})
		if err != nil {
			t.Fatal(err)
		}
		if len(ops) < 10 {
			t.Fatalf("%s: %d operations", name, len(ops))
		}
		for _, o := range ops {
			if !cs[name].KeyMatches(o.Key) {
				t.Fatalf("%s: key %q does not match %s", name, o.Key, cs[name].KeyPattern)
			}
		}
	}
}
