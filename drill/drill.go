// Package drill proves an operation type safe before production: it runs
// the seed cases (seed 000's verification cases, seed 002's acceptance
// cases, seed 003's duplicate test) for the type against a Handoff, through
// the wire contract and the Go client's Do, with a sandbox provider standing
// in for the real one, and writes a receipt of what happened.
//
// Every case's expected outcome is derived from the type's card; the
// sandbox is configured from the card's drill settings. When the two
// disagree — the card claims a guarantee the provider does not keep — the
// case fails and its explanation says which claim the drill disproved.
//
// The drill never reaches the real provider: it refuses a type whose
// drill.adapter is not "sandbox", and it never follows a card's lookup_url.
package drill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/sandbox"
)

// ErrNotSandbox refuses a type whose drill adapter is not a sandbox.
var ErrNotSandbox = errors.New("not a sandbox adapter")

// Namespace is the namespace a drill's workflow token must act in. Its
// operations never notify anyone and no other namespace's workers claim
// them, so a drill against a running Handoff sends no real notification.
const Namespace = "drill"

// NoNotifications is what every receipt says of notifications.
const NoNotifications = "none: every operation of the drill is in the drill namespace, whose operations never notify"

// ErrNotDrillNamespace refuses a workflow token outside Namespace.
var ErrNotDrillNamespace = errors.New("the workflow token is not in the drill namespace")

// Card is an operation type's card as GET /v1/operation-types answers it.
type Card struct {
	Name                 string   `json:"name"`
	Provider             string   `json:"provider"`
	ProviderIdempotency  string   `json:"provider_idempotency"`
	ProviderKeyRetention string   `json:"provider_key_retention"`
	Lookup               string   `json:"lookup"`
	LookupAuthoritative  bool     `json:"lookup_authoritative"`
	RequiresApproval     bool     `json:"requires_approval"`
	Retryable            []string `json:"retryable"`
	Terminal             []string `json:"terminal"`
	Retry                struct {
		MaxAttempts int    `json:"max_attempts"`
		Backoff     string `json:"backoff"`
	} `json:"retry"`
	Lease      string `json:"lease"`
	RetryLayer string `json:"retry_layer"`
	// CallTimeout is how long one provider call may take (case 17).
	CallTimeout   string `json:"call_timeout"`
	LookupAdapter *struct {
		Window string `json:"window"`
	} `json:"lookup_adapter"`
	// AutomaticResend is whether the server ever re-sends after begin on
	// its own; nil from a server that does not say (then dedupes decides).
	AutomaticResend    *bool  `json:"automatic_resend"`
	AutomaticResendOff string `json:"automatic_resend_off"`
	Drill              struct {
		Adapter     string `json:"adapter"`
		Idempotency string `json:"idempotency"`
		Lookup      string `json:"lookup"`
	} `json:"drill"`
	Receipts string `json:"receipts"`
	Version  int    `json:"version"`
	SHA256   string `json:"sha256"`
}

func (c Card) retention() time.Duration {
	d, _ := time.ParseDuration(c.ProviderKeyRetention)
	return d
}

// dedupes reports whether the card claims the provider deduplicates by key
// for some retention window.
func (c Card) dedupes() bool {
	return (c.ProviderIdempotency == "key" || c.ProviderIdempotency == "key_and_params") && c.retention() > 0
}

// autoResends reports whether the server re-sends a lost answer on its own
// under the deduplicated provider key: the card claims deduplication, and
// neither the retry layer nor an unknown or unverified contract turns
// automatic re-sends off.
func (c Card) autoResends() bool {
	return c.dedupes() && (c.AutomaticResend == nil || *c.AutomaticResend)
}

func (c Card) retryable(class string) bool { return slices.Contains(c.Retryable, class) }

// Types answers every operation type's card.
func Types(ctx context.Context, c *client.Client) ([]Card, error) {
	var list struct {
		Items []Card `json:"items"`
	}
	err := c.Call(ctx, http.MethodGet, "/v1/operation-types", nil, &list)
	return list.Items, err
}

// Type answers one operation type's card.
func Type(ctx context.Context, c *client.Client, name string) (Card, error) {
	var card Card
	err := c.Call(ctx, http.MethodGet, "/v1/operation-types/"+url.PathEscape(name), nil, &card)
	return card, err
}

// Options say how to reach the Handoff and how patient to be.
type Options struct {
	// Workflow calls the Handoff with a workflow token; required.
	Workflow *client.Client
	// Namespace is the workflow token's namespace; the drill runs only in
	// Namespace.
	Namespace string
	// Operator and Approver call it as two people (operator and approver
	// roles): the cases needing a person's decision are skipped without
	// them, and so is every case of a type that requires approval.
	Operator, Approver *client.Client
	// HandoffVersion and RanBy go into the receipt; Notes too (for example
	// what an embedded Handoff changed to make the drill fast).
	HandoffVersion, RanBy string
	Notes                 []string
	// ProviderTimeout is how long the worker waits for the sandbox's answer
	// (default 2s): a timeout_after fault costs this much.
	ProviderTimeout time.Duration
	// CrashLease is the lease, in seconds, of a worker the drill lets crash
	// (cases 3, 8 and 9): the drill waits for it to lapse. Default 3; the
	// API allows 1, which a loaded machine may outrun before begin.
	CrashLease int
	// MaxWait bounds every wait for a retry or for the key retention to
	// pass (default 2m); a case that would wait longer is skipped.
	MaxWait time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// LookupRoute, if set, is told each type's sandbox as it starts; it
	// answers true when the Handoff looks that type up itself (its card's
	// lookup_adapter pointed at the sandbox), and the lookup cases then
	// check Handoff's lookup instead of making their own.
	LookupRoute func(typ, sandboxURL string) bool
}

func (o *Options) defaults() error {
	if o.Workflow == nil {
		return errors.New("drill: a workflow client is required")
	}
	if o.Namespace != Namespace {
		return fmt.Errorf("drill: %w (it acts in %q): only %q operations never notify — create one with handoff token create --namespace %s",
			ErrNotDrillNamespace, o.Namespace, Namespace, Namespace)
	}
	if o.ProviderTimeout <= 0 {
		o.ProviderTimeout = 2 * time.Second
	}
	if o.CrashLease <= 0 {
		o.CrashLease = 3
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 2 * time.Minute
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// Refuse says why a card may not be drilled, nil when it may.
func Refuse(card Card) error {
	if card.Drill.Adapter != "sandbox" {
		adapter := card.Drill.Adapter
		if adapter == "" {
			adapter = "(none)"
		}
		return fmt.Errorf("type %s: drill.adapter is %s: %w; the drill runs only against a sandbox, never the real provider — set drill: {adapter: sandbox} on the card", card.Name, adapter, ErrNotSandbox)
	}
	return nil
}

// Run drills one type: it starts a sandbox configured from the card's drill
// settings, runs the twelve cases at once (each on its own keys) and
// answers the receipt. An error means the drill could not run at all (a
// refused adapter, an unreachable Handoff); a failing case is a receipt
// with verdict fail.
func Run(ctx context.Context, opts Options, card Card) (Receipt, error) {
	if err := opts.defaults(); err != nil {
		return Receipt{}, err
	}
	if err := Refuse(card); err != nil {
		return Receipt{}, err
	}
	sbCfg := sandbox.Config{Idempotency: or(card.Drill.Idempotency, card.ProviderIdempotency), Retention: card.retention(),
		Lookup: or(card.Drill.Lookup, sandbox.LookupNone), Hold: 30 * time.Second}
	sb, err := sandbox.New(sbCfg)
	if err != nil {
		return Receipt{}, fmt.Errorf("type %s: %w", card.Name, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Receipt{}, err
	}
	srv := &http.Server{Handler: sb.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()

	r := &run{opts: opts, card: card, sb: sb, sbc: sandbox.NewClient("http://"+ln.Addr().String(), opts.ProviderTimeout),
		prefix: "drill-" + card.Name + "-" + randomHex(4)}
	r.handoffLooksUp = opts.LookupRoute != nil && opts.LookupRoute(card.Name, "http://"+ln.Addr().String())
	cfg := sb.Config()
	rec := Receipt{ID: "drl_" + randomHex(10), Type: card.Name,
		Card:       CardRef{Name: card.Name, Version: card.Version, SHA256: card.SHA256},
		HandoffURL: opts.Workflow.BaseURL, HandoffVersion: opts.HandoffVersion, RanBy: opts.RanBy,
		StartedAt: opts.Now().UTC(),
		Conditions: Conditions{Adapter: card.Drill.Adapter, SandboxIdempotency: cfg.Idempotency,
			SandboxRetention: cfg.Retention.String(), SandboxLookup: cfg.Lookup,
			ProviderIdempotency: card.ProviderIdempotency, ProviderKeyRetention: card.ProviderKeyRetention,
			Lookup: card.Lookup, LookupAuthoritative: card.LookupAuthoritative, RetryLayer: card.RetryLayer,
			Retryable: card.Retryable, RequiresApproval: card.RequiresApproval, Backoff: card.Retry.Backoff,
			ProviderTimeout: opts.ProviderTimeout.String(), KeyPrefix: r.prefix, Namespace: opts.Namespace,
			Notifications: NoNotifications, Notes: opts.Notes}}
	if rec.Conditions.Retryable == nil {
		rec.Conditions.Retryable = []string{}
	}

	rec.Cases = make([]CaseResult, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Go(func() { rec.Cases[i] = r.runCase(ctx, i+1, c) })
	}
	wg.Wait()
	rec.FinishedAt = opts.Now().UTC()
	rec.Verdict = overall(rec.Cases)
	return rec, nil
}

// overall is pass when every case passed (or did not apply to the card),
// fail when one failed, incomplete when one was skipped.
func overall(cs []CaseResult) string {
	v := VerdictPass
	for _, c := range cs {
		switch c.Verdict {
		case VerdictFail:
			return VerdictFail
		case VerdictSkipped:
			v = VerdictIncomplete
		}
	}
	return v
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
