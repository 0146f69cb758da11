package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/drill"
	"github.com/opshandoff/handoff/store"
)

// drillCmd runs `handoff drill` and `handoff drill verify RECEIPT`.
func drillCmd(ctx context.Context, cfg config, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "verify" {
		return drillVerify(ctx, cfg, args, stdout)
	}
	flags, err := parseDrillFlags(args, stderr)
	if err != nil {
		return err
	}
	opts := drill.Options{HandoffVersion: handoffVersion(), RanBy: orDefault(flags.by, whoAmI()), MaxWait: flags.maxWait}
	var record recorder
	if flags.url != "" {
		record, err = drillRemote(ctx, flags, &opts)
	} else {
		var done func()
		record, done, err = drillEmbedded(ctx, cfg, &opts)
		if err == nil {
			defer done()
		}
	}
	if err != nil {
		return err
	}
	list, err := drillTypes(ctx, opts.Workflow, flags.typ)
	if err != nil {
		return err
	}
	_, err = drillAndRecord(ctx, record, opts, list, flags.receipts, stdout)
	return err
}

// drillVerify runs `handoff drill verify RECEIPT`.
func drillVerify(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: handoff drill verify RECEIPT.json")
	}
	s, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer s.Close()
	msg, err := verifyReceipt(ctx, s, args[1])
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, msg)
	return nil
}

// drillFlags are `handoff drill`'s flags.
type drillFlags struct {
	typ, url, token, operatorToken, approverToken, receipts, by string
	maxWait                                                     time.Duration
}

// parseDrillFlags reads `handoff drill`'s flags.
func parseDrillFlags(args []string, stderr io.Writer) (drillFlags, error) {
	var f drillFlags
	fs := flag.NewFlagSet("drill", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.typ, "type", "", "the operation type to drill (default: every type)")
	fs.StringVar(&f.url, "url", "", "a running Handoff to drill (default: an embedded one on a throwaway database)")
	fs.StringVar(&f.token, "token", "", "a workflow token of the running Handoff (with --url)")
	fs.StringVar(&f.operatorToken, "operator-token", "", "a person's bearer token with the operator role (with --url)")
	fs.StringVar(&f.approverToken, "approver-token", "", "another person's bearer token with the approver role (with --url)")
	fs.StringVar(&f.receipts, "receipts", "", "where to write receipts (default: each card's receipts field, else ./receipts)")
	fs.StringVar(&f.by, "by", "", "who runs the drill (default: the OS user and host)")
	fs.DurationVar(&f.maxWait, "max-wait", 2*time.Minute, "the longest the drill waits for a retry or a key retention")
	return f, fs.Parse(args)
}

// drillRemote points the drill at a running Handoff (--url) with the
// given tokens.
func drillRemote(ctx context.Context, flags drillFlags, opts *drill.Options) (recorder, error) {
	if flags.token == "" {
		return nil, fmt.Errorf("drill: --url needs --token, a workflow token of that Handoff")
	}
	wf := client.New(flags.url, flags.token)
	ns, err := drillTokenNamespace(ctx, wf)
	if err != nil {
		return nil, err
	}
	opts.Workflow, opts.Namespace = wf, ns
	if flags.operatorToken != "" {
		opts.Operator = client.New(flags.url, flags.operatorToken)
	}
	if flags.approverToken != "" {
		opts.Approver = client.New(flags.url, flags.approverToken)
	}
	// The receipt is recorded at the Handoff that was drilled, through
	// its API, so its Types page shows it and its audit trail holds the
	// hash — never in whatever local database this process would find.
	return recordAt(opts.Workflow), nil
}

// drillEmbedded points the drill at an embedded Handoff on a throwaway
// database, with receipts recorded in the configured one; done closes
// both databases and the embedded Handoff.
func drillEmbedded(ctx context.Context, cfg config, opts *drill.Options) (record recorder, done func(), err error) {
	var opened closers
	defer func() {
		if err != nil {
			opened.close()
		}
	}()
	// Receipts are stored where the Handoff keeps its data: the same
	// HANDOFF_DATABASE_URL as the server's, so its Types page shows them.
	s, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, nil, err
	}
	opened.add(func() { s.Close() })
	cards, err := drillCards(ctx, cfg, s)
	if err != nil {
		return nil, nil, err
	}
	emb, err := startScratch(ctx, cards, &opened)
	if err != nil {
		return nil, nil, err
	}
	opts.Workflow, opts.Operator, opts.Approver, opts.Notes = emb.Workflow, emb.Operator, emb.Approver, emb.Notes
	opts.LookupRoute = emb.LookupRoute
	opts.ExecuteRoute = emb.ExecuteRoute
	opts.Namespace = emb.Namespace
	return recordIn(s), opened.close, nil
}

// drillCards are this configuration's cards (HANDOFF_CARDS), versioned as
// serve versions them, so a receipt names the version the server will
// show.
func drillCards(ctx context.Context, cfg config, s *store.Store) (domain.Cards, error) {
	cards, err := cfg.loadCards()
	if err != nil {
		return nil, err
	}
	versions, err := s.SyncCards(ctx, cards)
	if err != nil {
		return nil, err
	}
	stampCards(cards, versions)
	return cards, nil
}

// startScratch starts the embedded Handoff on a SQLite database in a
// temporary folder; opened gets what to close and remove afterwards.
func startScratch(ctx context.Context, cards domain.Cards, opened *closers) (*embeddedHandoff, error) {
	dir, err := os.MkdirTemp("", "handoff-drill-")
	if err != nil {
		return nil, err
	}
	opened.add(func() { os.RemoveAll(dir) })
	scratch, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "drill.db"))
	if err != nil {
		return nil, err
	}
	opened.add(func() { scratch.Close() })
	emb, err := startEmbedded(ctx, scratch, cards)
	if err != nil {
		return nil, err
	}
	opened.add(emb.Close)
	return emb, nil
}

// closers are what a command opened, closed in the reverse order, as
// deferred calls would be.
type closers []func()

func (cs *closers) add(f func()) { *cs = append(*cs, f) }

func (cs closers) close() {
	for i := len(cs) - 1; i >= 0; i-- {
		cs[i]()
	}
}

// drillTypes are the operation types to drill: every one of the drilled
// Handoff's, or the one named.
func drillTypes(ctx context.Context, wf *client.Client, name string) ([]drill.Card, error) {
	list, err := drill.Types(ctx, wf)
	if err != nil {
		return nil, fmt.Errorf("drill: reading the operation types: %w", err)
	}
	if name != "" {
		list = filterTypes(list, name)
		if len(list) == 0 {
			return nil, fmt.Errorf("drill: no operation type named %q", name)
		}
	}
	return list, nil
}

// drillTokenNamespace asks the drilled Handoff who --token is, before the
// drill registers anything: a drill runs only in the drill namespace, whose
// operations never notify, so a token of another namespace is refused.
func drillTokenNamespace(ctx context.Context, c *client.Client) (string, error) {
	var who struct {
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
	}
	if err := c.Call(ctx, http.MethodGet, "/v1/whoami", nil, &who); err != nil {
		return "", fmt.Errorf("drill: --token is not a live workflow token of %s: %w", c.BaseURL, err)
	}
	if who.Kind != domain.ActorWorkflow.String() || who.Namespace != domain.DrillNamespace {
		return "", fmt.Errorf("drill: %w: --token acts in %q; a drill runs only in %q, whose operations never notify — "+
			"create a token with handoff token create --namespace %s --name NAME", drill.ErrNotDrillNamespace,
			who.Namespace, domain.DrillNamespace, domain.DrillNamespace)
	}
	return who.Namespace, nil
}

func filterTypes(list []drill.Card, name string) []drill.Card {
	for _, c := range list {
		if c.Name == name {
			return []drill.Card{c}
		}
	}
	return nil
}

// drillAndRecord drills each type, writes its receipt (JSON and Markdown),
// stores it and chains its hash into the audit trail. It fails loudly: a
// refused type or a failing case makes it return an error that names them.
func drillAndRecord(ctx context.Context, record recorder, opts drill.Options, list []drill.Card, dir string, out io.Writer) ([]drill.Receipt, error) {
	var done []drill.Receipt
	var problems []string
	recs, errs := drillAll(ctx, opts, list)
	for i, card := range list {
		if err := drill.Refuse(card); err != nil {
			fmt.Fprintf(out, "REFUSED %s: %v\n", card.Name, err)
			problems = append(problems, err.Error())
			continue
		}
		rec, err := recs[i], errs[i]
		if err != nil {
			return done, fmt.Errorf("drill %s: %w", card.Name, err)
		}
		where := dir
		if where == "" {
			where = orDefault(card.Receipts, "receipts")
		}
		p, raw, err := drill.Write(where, rec)
		if err != nil {
			return done, err
		}
		if err := record(ctx, rec, raw); err != nil {
			return done, err
		}
		done = append(done, rec)
		printReceipt(out, rec, p)
		if rec.Verdict != drill.VerdictPass {
			problems = append(problems, fmt.Sprintf("%s: %s", rec.Type, rec.Verdict))
		}
	}
	if len(problems) > 0 {
		return done, fmt.Errorf("drill did not pass: %s", strings.Join(problems, "; "))
	}
	return done, nil
}

// drillAll drills the types the drill does not refuse, at once (each on
// its own keys and its own sandbox); the receipts are recorded one by one
// in order afterwards.
func drillAll(ctx context.Context, opts drill.Options, list []drill.Card) ([]drill.Receipt, []error) {
	recs := make([]drill.Receipt, len(list))
	errs := make([]error, len(list))
	var wg sync.WaitGroup
	for i, card := range list {
		if drill.Refuse(card) == nil {
			wg.Go(func() { recs[i], errs[i] = drill.Run(ctx, opts, card) })
		}
	}
	wg.Wait()
	return recs, errs
}

// printReceipt says a type's verdict, where its receipt is, and each case
// that failed or was skipped.
func printReceipt(out io.Writer, rec drill.Receipt, path string) {
	fmt.Fprintf(out, "%s %s (card version %d): %s — receipt %s\n", strings.ToUpper(rec.Verdict), rec.Type, rec.Card.Version, caseTally(rec), path)
	for _, c := range rec.Cases {
		if c.Verdict == drill.VerdictFail || c.Verdict == drill.VerdictSkipped {
			fmt.Fprintf(out, "  case %d, %s: %s: %s\n", c.Number, c.Name, strings.ToUpper(c.Verdict), c.Explanation)
		}
	}
}

// caseTally counts the receipt's cases by verdict.
func caseTally(r drill.Receipt) string {
	n := map[string]int{}
	for _, c := range r.Cases {
		n[c.Verdict]++
	}
	return fmt.Sprintf("%d passed, %d not applicable, %d failed, %d skipped",
		n[drill.VerdictPass], n[drill.VerdictNotApplicable], n[drill.VerdictFail], n[drill.VerdictSkipped])
}

// recorder records a written receipt where the drilled Handoff keeps them.
type recorder func(ctx context.Context, rec drill.Receipt, raw []byte) error

// recordIn records receipts in the database of an embedded drill.
func recordIn(s *store.Store) recorder {
	return func(ctx context.Context, rec drill.Receipt, raw []byte) error { return recordReceipt(ctx, s, rec, raw) }
}

// recordAt records receipts at a running Handoff (POST /v1/drill-receipts).
func recordAt(c *client.Client) recorder {
	return func(ctx context.Context, rec drill.Receipt, raw []byte) error {
		if err := c.Call(ctx, http.MethodPost, "/v1/drill-receipts", map[string]any{"receipt": string(raw)}, nil); err != nil {
			return fmt.Errorf("recording receipt %s at the drilled Handoff: %w", rec.ID, err)
		}
		return nil
	}
}

// recordReceipt stores the receipt and its hash as a drill_recorded event
// of the system stream.
func recordReceipt(ctx context.Context, s *store.Store, rec drill.Receipt, raw []byte) error {
	dr := domain.DrillRecord{ID: rec.ID, Type: rec.Type, CardVersion: rec.Card.Version, CardSHA256: rec.Card.SHA256,
		Verdict: rec.Verdict, SHA256: drill.Hash(raw), RanBy: rec.RanBy, RanAt: rec.FinishedAt}
	actor := cliActor()
	if rec.RanBy != "" {
		actor.Name = rec.RanBy
	}
	_, err := s.SaveDrill(ctx, dr, raw, domain.DrillRecordedEvent(ctx, &domain.IDSource{}, time.Now(), actor, dr))
	return err
}

// errReceiptEdited is a receipt whose hash no longer matches its audit event.
var errReceiptEdited = errors.New("receipt does not match the audit trail")

// verifyReceipt checks a receipt file against the hash its drill_recorded
// audit event holds.
func verifyReceipt(ctx context.Context, s *store.Store, path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	rec, err := drill.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	e, found, err := s.DrillAudit(ctx, rec.ID)
	if err != nil {
		return "", err
	}
	if !found {
		return "", fmt.Errorf("%s: %w: no drill_recorded audit event names receipt %s", path, errReceiptEdited, rec.ID)
	}
	got, want := drill.Hash(raw), detailField(e, "sha256")
	if got != want {
		return "", fmt.Errorf("%s: %w: the file's sha256 is %s, audit event %s (seq %d) recorded %s for receipt %s — the receipt was edited after the drill",
			path, errReceiptEdited, got, e.ID, e.Seq, want, rec.ID)
	}
	return fmt.Sprintf("receipt %s (%s, verdict %s) verified: sha256 %s matches audit event %s (seq %d)", rec.ID, rec.Type, rec.Verdict, got, e.ID, e.Seq), nil
}

func detailField(e domain.AuditEvent, field string) string {
	var m map[string]any
	if err := json.Unmarshal(e.Detail, &m); err != nil {
		return ""
	}
	v, _ := m[field].(string)
	return v
}

// handoffVersion is the module version and VCS revision the binary was
// built from, as far as the build recorded them.
func handoffVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			v += " " + s.Value
		}
	}
	return v
}

func whoAmI() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	if h, err := os.Hostname(); err == nil {
		name += "@" + h
	}
	return name
}
