package domain

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ProviderIdempotency says whether the provider deduplicates requests by the
// idempotency key Handoff derives for each operation.
type ProviderIdempotency struct{ s string }

// The provider idempotency kinds.
var (
	IdempotencyNone         = ProviderIdempotency{"none"}
	IdempotencyKey          = ProviderIdempotency{"key"}
	IdempotencyKeyAndParams = ProviderIdempotency{"key_and_params"}
	// IdempotencyUnknown: nobody has established what the provider does
	// with a repeated key. An unknown contract is not a safe one: nothing
	// is re-sent automatically after begin.
	IdempotencyUnknown = ProviderIdempotency{"unknown"}
)

func (p ProviderIdempotency) String() string { return p.s }

// ParseProviderIdempotency reads a provider idempotency kind.
func ParseProviderIdempotency(v string) (ProviderIdempotency, error) {
	return parse(v, []ProviderIdempotency{IdempotencyNone, IdempotencyKey, IdempotencyKeyAndParams, IdempotencyUnknown}, "provider_idempotency")
}

// LookupMethod says how a result can be looked up at the provider.
type LookupMethod struct{ s string }

// The lookup methods.
var (
	LookupNone   = LookupMethod{"none"}
	LookupAPI    = LookupMethod{"api"}
	LookupManual = LookupMethod{"manual"}
)

func (l LookupMethod) String() string { return l.s }

// ParseLookupMethod reads a lookup method.
func ParseLookupMethod(v string) (LookupMethod, error) {
	return parse(v, []LookupMethod{LookupNone, LookupAPI, LookupManual}, "lookup")
}

// RetryPolicy bounds automatic retries.
type RetryPolicy struct {
	MaxAttempts int
	MaxElapsed  time.Duration
	Backoff     time.Duration
	BackoffMax  time.Duration
}

// Card is an operation type's retry safety card: what the side effect is, what
// the provider guarantees, and therefore what Handoff may do after an error.
type Card struct {
	Name                 string
	Description          string
	SideEffect           string
	Provider             string
	ProviderIdempotency  ProviderIdempotency
	ProviderKeyRetention time.Duration
	Lookup               LookupMethod
	LookupURL            string
	LookupAuthoritative  bool
	RequiresApproval     bool
	Retry                RetryPolicy
	Retryable            []ErrorClass
	Terminal             []ErrorClass
	Lease                time.Duration
	Owner                string
	NotifyURL            string
	// Notify lists where notifications go; NotifyURL is its one-destination
	// shorthand. EscalateAfter and Escalate name who is told about items
	// still unassigned and unresolved after that long.
	Notify            []Destination
	EscalateAfter     time.Duration
	Escalate          []Destination
	NotifyIncludeData bool // notifications carry content and result data
	Unverified        []string
	// ContentVisibleTo is the lowest role that may read the content and
	// result data; people below see their hash and size. Zero: everyone.
	ContentVisibleTo Role

	// The rest of seed 003's card template: which layer retries (only one
	// may, or the retries multiply), who confirms what happened, how the
	// business key is made, how the drill runs it and where its receipts go.
	RetryLayer          RetryLayer
	ReconciliationOwner string
	IDRule              string
	Drill               DrillSettings
	Receipts            string

	// LookupAdapter, if set, is how Handoff looks an unknown outcome up at
	// the provider itself before a person is asked (see lookup_adapter.go).
	LookupAdapter *LookupAdapter
	// CallTimeout is how long one provider call may take (call_timeout);
	// 0: twice the lease (see card_deadline.go).
	CallTimeout time.Duration
	// ExecuteAdapter, if set, is how Handoff makes the provider call
	// itself, and ExecuteEndpoint how POST /v1/execute/{type} reads a
	// request for it (see execute_adapter.go).
	ExecuteAdapter  *ExecuteAdapter
	ExecuteEndpoint *ExecuteEndpoint
	// KeyPattern is a regexp every key of the type must match (IDRule is
	// its prose); "" for none. TwinsAllowed lets the same content run under
	// another key while one is unresolved (a daily digest); ProviderConcurrency
	// is how the provider treats concurrent requests under one key.
	KeyPattern string
	// Summary names JSON pointers into the content whose values the desk
	// shows beside each key in its lists (card_summary.go).
	Summary             []string
	TwinsAllowed        bool
	ProviderConcurrency string
	// Identity names, as JSON pointers into the content, the fields that
	// make two contents the same business intent (identity.go); nil for
	// the exact content. Echo, if set, marks registrations that are echoes
	// of our own effects.
	Identity []string
	Echo     *Echo

	// Version and SHA256 identify the card as recorded in the database;
	// set by the wiring once the cards are synced, empty before.
	Version int
	SHA256  string
}

// RetryLayer names the one layer that retries an operation type.
type RetryLayer struct{ s string }

// The retry layers.
var (
	// RetryByHandoff: Handoff schedules retries; workers and SDKs do not.
	RetryByHandoff = RetryLayer{"handoff"}
	// RetryByWorker: the worker retries inside its call to the provider;
	// Handoff only records the attempt's outcome.
	RetryByWorker = RetryLayer{"worker"}
	// RetryByNobody: nobody retries automatically; every failure that
	// would be retried waits for a person.
	RetryByNobody = RetryLayer{"none"}
)

func (r RetryLayer) String() string { return r.s }

// ParseRetryLayer reads a retry layer.
func ParseRetryLayer(v string) (RetryLayer, error) {
	return parse(v, []RetryLayer{RetryByHandoff, RetryByWorker, RetryByNobody}, "retry_layer")
}

// Retrier is the card's retry layer; Handoff when the card names none.
func (c Card) Retrier() RetryLayer {
	if c.RetryLayer == (RetryLayer{}) {
		return RetryByHandoff
	}
	return c.RetryLayer
}

// DrillSettings say how `handoff drill` exercises the type: the adapter
// standing in for the provider (only a sandbox is ever drilled) and how
// that sandbox behaves. Idempotency and Lookup default to what the card
// claims, so a drill checks the claims against a provider that keeps them.
type DrillSettings struct {
	Adapter     string // "sandbox" to be drilled; anything else is refused
	Idempotency string // none, key, key_and_params
	Lookup      string // none, authoritative, unsure
}

// DrillAdapterSandbox is the only adapter the drill runs against.
const DrillAdapterSandbox = "sandbox"

// DrillIdempotency is how the drill's sandbox deduplicates.
func (c Card) DrillIdempotency() string {
	if c.Drill.Idempotency != "" {
		return c.Drill.Idempotency
	}
	return c.ProviderIdempotency.String()
}

// DrillLookup is how the drill's sandbox answers lookups.
func (c Card) DrillLookup() string {
	switch {
	case c.Drill.Lookup != "":
		return c.Drill.Lookup
	case c.Lookup == LookupNone:
		return "none"
	case c.LookupAuthoritative:
		return "authoritative"
	}
	return "unsure"
}

var cardNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)

// Validate lists every problem with the card, naming each field as it is
// written in the YAML file.
func (c Card) Validate() []FieldError {
	var errs []FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !cardNameRE.MatchString(c.Name) {
		bad("name", "must be 1-100 characters of a-z 0-9 . _ - starting with a letter or digit")
	}
	if strings.TrimSpace(c.Provider) == "" {
		bad("provider", "is required")
	}
	if c.ProviderIdempotency == (ProviderIdempotency{}) {
		bad("provider_idempotency", "must be none, key, key_and_params or unknown")
	}
	if c.DedupesByKey() && c.ProviderKeyRetention <= 0 {
		bad("provider_key_retention", "is required when the provider deduplicates by key")
	}
	if c.ProviderKeyRetention < 0 {
		bad("provider_key_retention", "must not be negative")
	}
	if c.Lookup == (LookupMethod{}) {
		bad("lookup", "must be none, api or manual")
	}
	if c.LookupURL != "" {
		u, err := url.Parse(strings.ReplaceAll(c.LookupURL, lookupPlaceholder, "x"))
		switch {
		case err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "":
			bad("lookup_url", "must be an http(s) URL; {provider_key} is replaced by the key")
		case strings.Contains(lookupAuthority(c.LookupURL), lookupPlaceholder):
			bad("lookup_url", "may use {provider_key} only in the path or the query, not in the scheme, host or port: "+
				"there a workflow's provider key could choose where the desk's link points")
		case strings.Contains(fragment(c.LookupURL), lookupPlaceholder):
			bad("lookup_url", "may use {provider_key} only in the path or the query, not in the fragment")
		}
	}
	if c.LookupAuthoritative && c.Lookup == LookupNone {
		bad("lookup_authoritative", "cannot be true when lookup is none")
	}
	if c.Retry.MaxAttempts < 1 || c.Retry.MaxAttempts > 1000 {
		bad("retry.max_attempts", "must be between 1 and 1000")
	}
	if c.Retry.MaxElapsed < 0 {
		bad("retry.max_elapsed", "must not be negative")
	}
	if c.Retry.Backoff <= 0 {
		bad("retry.backoff", "must be positive")
	}
	if c.Retry.BackoffMax < c.Retry.Backoff {
		bad("retry.backoff_max", "must be at least retry.backoff")
	}
	for _, r := range c.Retryable {
		if slices.Contains(c.Terminal, r) {
			bad("retryable", "%s is also listed as terminal", r)
		}
	}
	if c.Lease < time.Second || c.Lease > time.Hour {
		bad("lease", "must be between 1s and 1h")
	}
	if c.Drill.Idempotency != "" {
		if _, err := ParseProviderIdempotency(c.Drill.Idempotency); err != nil {
			bad("drill.idempotency", "must be none, key, key_and_params or unknown")
		}
	}
	if c.Drill.Lookup != "" && c.Drill.Lookup != "none" && c.Drill.Lookup != "authoritative" && c.Drill.Lookup != "unsure" {
		bad("drill.lookup", "must be none, authoritative or unsure")
	}
	errs = append(errs, validateKeyRules(c)...)
	errs = append(errs, validateCallTimeout(c)...)
	errs = append(errs, validateSummary(c)...)
	errs = append(errs, validateIdentity(c)...)
	if c.NotifyURL != "" {
		u, err := url.Parse(c.NotifyURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			bad("notify_url", "must be an http(s) URL")
		}
	}
	if c.NotifyURL != "" && len(c.Notify) > 0 {
		bad("notify_url", "cannot be used together with notify")
	}
	for i, d := range c.Notify {
		errs = append(errs, d.validate(fmt.Sprintf("notify[%d]", i))...)
	}
	for i, d := range c.Escalate {
		errs = append(errs, d.validate(fmt.Sprintf("escalate[%d]", i))...)
	}
	if c.NotifyIncludeData && c.NotifyURL != "" && c.hidesContentFromViewers() {
		bad("notify_include_data", "would send content that content_visible_to: %s hides; list the destinations under notify, "+
			"each with sees_hidden_content: true", c.ContentVisibleTo)
	}
	for field, ds := range map[string][]Destination{"notify": c.Notify, "escalate": c.Escalate} {
		for i, d := range ds {
			if c.SendsHiddenContent(d) {
				bad(fmt.Sprintf("%s[%d].sees_hidden_content", field, i), "must be true: notify_include_data would send it "+
					"content that content_visible_to: %s hides", c.ContentVisibleTo)
			}
		}
	}
	if c.EscalateAfter < 0 {
		bad("escalate_after", "must not be negative")
	}
	if c.LookupAdapter != nil {
		errs = append(errs, c.LookupAdapter.validate(c)...)
	}
	errs = append(errs, validateExecute(c)...)
	if len(c.Escalate) > 0 && c.EscalateAfter == 0 {
		bad("escalate_after", "is required when escalate lists destinations")
	}
	return errs
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func (d Destination) validate(field string) []FieldError {
	var errs []FieldError
	if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		errs = append(errs, FieldError{field + ".url", "must be an http(s) URL"})
	}
	if d.SecretEnv != "" && !envNameRE.MatchString(d.SecretEnv) {
		errs = append(errs, FieldError{field + ".secret_env", "must name an environment variable"})
	}
	if d.Unsigned && d.SecretEnv != "" {
		errs = append(errs, FieldError{field + ".unsigned", "cannot be true with a secret_env"})
	}
	if d.Format != FormatStandard && d.Format != FormatSlack {
		errs = append(errs, FieldError{field + ".format", "must be standard or slack"})
	}
	for _, k := range d.Kinds() {
		if !validKind(k) {
			errs = append(errs, FieldError{field + ".events", fmt.Sprintf("%q is not a kind of notification: name one of %s, a group such as incident.*, or *",
				k, strings.Join(NotifyKinds, ", "))})
			break
		}
	}
	return errs
}

// IsTerminal reports whether the card calls the class terminal.
func (c Card) IsTerminal(class ErrorClass) bool { return slices.Contains(c.Terminal, class) }

// IsRetryable reports whether the card lets the class be retried.
func (c Card) IsRetryable(class ErrorClass) bool { return slices.Contains(c.Retryable, class) }

// ResendSafe reports whether re-sending is proven safe because the provider
// deduplicates by key and the key is still inside its retention window.
func (c Card) ResendSafe(firstSent *time.Time, now time.Time) bool {
	until, ok := c.DedupUntil(firstSent)
	return ok && now.Before(until)
}

// DedupUntil is when the provider forgets the key first sent at firstSent:
// until then a re-send under it is deduplicated. ok is false when the
// provider does not deduplicate by key or nothing was sent.
func (c Card) DedupUntil(firstSent *time.Time) (until time.Time, ok bool) {
	if !c.DedupesByKey() || firstSent == nil || c.ProviderKeyRetention <= 0 {
		return time.Time{}, false
	}
	return firstSent.Add(c.ProviderKeyRetention), true
}

// lookupPlaceholder is replaced by the provider key in a card's lookup URL.
const lookupPlaceholder = "{provider_key}"

// lookupAuthority is the lookup URL up to the end of its host and port:
// the part a placeholder must never reach.
func lookupAuthority(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return scheme + "://" + rest
}

func fragment(u string) string {
	_, f, _ := strings.Cut(u, "#")
	return f
}

// LookupLink fills the card's lookup URL with the provider key, escaped for
// where it stands: as a path segment before the query, as a query value in
// it. Validate keeps the placeholder out of the host, so no key can move
// the link elsewhere.
func (c Card) LookupLink(providerKey string) string {
	if c.LookupURL == "" {
		return ""
	}
	path, query, hasQuery := strings.Cut(c.LookupURL, "?")
	link := strings.ReplaceAll(path, lookupPlaceholder, url.PathEscape(providerKey))
	if hasQuery {
		link += "?" + strings.ReplaceAll(query, lookupPlaceholder, url.QueryEscape(providerKey))
	}
	return link
}

// Cards is the loaded set of operation types, by name.
type Cards map[string]Card

// Get returns the card of the named type, or unknown_type.
func (cs Cards) Get(name string) (Card, error) {
	c, ok := cs[name]
	if !ok {
		return Card{}, Errorf(EUnknownType, "no operation type named %q", name)
	}
	return c, nil
}

// Sorted returns the cards ordered by name.
func (cs Cards) Sorted() []Card {
	out := make([]Card, 0, len(cs))
	for _, c := range cs {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Card) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// narrowToProvider turns a provider filter into the query's types: those of
// the provider's types the query already allows. It reports false when none
// is left, so the caller answers nothing rather than everything.
func (cs Cards) narrowToProvider(q *ListQuery, provider string) bool {
	if provider == "" {
		return true
	}
	var types []string
	for _, c := range cs.Sorted() {
		if c.Provider == provider && (len(q.Types) == 0 || slices.Contains(q.Types, c.Name)) {
			types = append(types, c.Name)
		}
	}
	q.Types = types
	return len(types) > 0
}

// RetryRisk says why a person's retry of op may do its side effect twice:
// the provider does not deduplicate and the key was already sent, so the
// earlier attempt may have reached it. "" when a retry cannot duplicate.
// The desk asks the person to confirm this risk before retrying.
func (c Card) RetryRisk(op Operation) string {
	if c.DedupesByKey() || op.ProviderKeyFirstSentAt == nil {
		return ""
	}
	if c.ProviderIdempotency == IdempotencyUnknown {
		return "Nobody has established whether " + c.Provider + " deduplicates, so if the earlier attempt reached it, a retry may do it twice."
	}
	return c.Provider + " does not deduplicate, so if the earlier attempt reached it, a retry does it twice."
}
