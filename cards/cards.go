// Package cards loads operation types — retry safety cards — from YAML: one
// file holding a list of cards, or a folder of such files. It only parses;
// what a card means and whether it is valid is decided in domain.
//
// The YAML parser is github.com/goccy/go-yaml, which gin already brings in.
package cards

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/opshandoff/handoff/domain"
)

//go:embed examples/*.yaml
var examples embed.FS

// Examples returns the bundled example cards, used when HANDOFF_CARDS is unset.
func Examples() (domain.Cards, error) {
	sub, _ := fs.Sub(examples, "examples")
	return loadFS(sub, "bundled examples")
}

// Load reads the cards in a YAML file, or in every .yaml/.yml file of a folder.
func Load(p string) (domain.Cards, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("operation types: %w", err)
	}
	if info.IsDir() {
		return loadFS(os.DirFS(p), p)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("operation types: %w", err)
	}
	cards := domain.Cards{}
	if err := parseInto(cards, p, raw); err != nil {
		return nil, err
	}
	return nonEmpty(cards, p)
}

func loadFS(fsys fs.FS, name string) (domain.Cards, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, fmt.Errorf("operation types: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	cards := domain.Cards{}
	var errs []error
	for _, e := range entries {
		ext := path.Ext(e.Name())
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		raw, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return nil, err
		}
		if err := parseInto(cards, filepath.Join(name, e.Name()), raw); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return nonEmpty(cards, name)
}

func nonEmpty(cards domain.Cards, name string) (domain.Cards, error) {
	if len(cards) == 0 {
		return nil, fmt.Errorf("%s: no operation types defined", name)
	}
	return cards, nil
}

// cardYAML is a card as written in a file.
type cardYAML struct {
	Name                 string     `yaml:"name"`
	Description          string     `yaml:"description"`
	SideEffect           string     `yaml:"side_effect"`
	Provider             string     `yaml:"provider"`
	ProviderIdempotency  string     `yaml:"provider_idempotency"`
	ProviderKeyRetention string     `yaml:"provider_key_retention"`
	Lookup               string     `yaml:"lookup"`
	LookupURL            string     `yaml:"lookup_url"`
	LookupAuthoritative  bool       `yaml:"lookup_authoritative"`
	RequiresApproval     bool       `yaml:"requires_approval"`
	Retry                retryYAML  `yaml:"retry"`
	Retryable            []string   `yaml:"retryable"`
	Terminal             []string   `yaml:"terminal"`
	Lease                string     `yaml:"lease"`
	Owner                string     `yaml:"owner"`
	NotifyURL            string     `yaml:"notify_url"`
	Notify               []destYAML `yaml:"notify"`
	EscalateAfter        string     `yaml:"escalate_after"`
	Escalate             []destYAML `yaml:"escalate"`
	NotifyIncludeData    bool       `yaml:"notify_include_data"`
	Unverified           []string   `yaml:"unverified"`
	RetryLayer           string     `yaml:"retry_layer"`
	ReconciliationOwner  string     `yaml:"reconciliation_owner"`
	IDRule               string     `yaml:"id_rule"`
	Drill                drillYAML  `yaml:"drill"`
	Receipts             string     `yaml:"receipts"`
	ContentVisibleTo     string     `yaml:"content_visible_to"`

	LookupAdapter       *lookupAdapterYAML   `yaml:"lookup_adapter"`
	ExecuteAdapter      *executeAdapterYAML  `yaml:"execute_adapter"`
	ExecuteEndpoint     *executeEndpointYAML `yaml:"execute_endpoint"`
	CallTimeout         string               `yaml:"call_timeout"`
	KeyPattern          string               `yaml:"key_pattern"`
	Summary             []string             `yaml:"summary"`
	Twins               string               `yaml:"twins"`
	ProviderConcurrency string               `yaml:"provider_concurrency"`
	Identity            []string             `yaml:"identity"`
	Echo                *echoYAML            `yaml:"echo"`
}

// echoYAML is a card's echo line: the source that marks an echo of our own
// effect, and how long after the original completed it may arrive.
type echoYAML struct {
	Source string `yaml:"source"`
	Within string `yaml:"within"`
}

// destYAML is a notification destination; format defaults to standard.
type destYAML struct {
	URL               string   `yaml:"url"`
	SecretEnv         string   `yaml:"secret_env"`
	Format            string   `yaml:"format"`
	Unsigned          bool     `yaml:"unsigned"`
	SeesHiddenContent bool     `yaml:"sees_hidden_content"`
	Events            []string `yaml:"events"`
}

func destinations(ds []destYAML) []domain.Destination {
	var out []domain.Destination
	for _, d := range ds {
		if d.Format == "" {
			d.Format = domain.FormatStandard
		}
		out = append(out, domain.Destination{URL: d.URL, SecretEnv: d.SecretEnv, Format: d.Format, Unsigned: d.Unsigned,
			SeesHiddenContent: d.SeesHiddenContent, Events: strings.Join(d.Events, ",")})
	}
	return out
}

type drillYAML struct {
	Adapter     string `yaml:"adapter"`
	Idempotency string `yaml:"idempotency"`
	Lookup      string `yaml:"lookup"`
}

type retryYAML struct {
	MaxAttempts int    `yaml:"max_attempts"`
	MaxElapsed  string `yaml:"max_elapsed"`
	Backoff     string `yaml:"backoff"`
	BackoffMax  string `yaml:"backoff_max"`
}

// parseInto adds the file's cards to cards; every error names the file, the
// card and the field.
func parseInto(cards domain.Cards, file string, raw []byte) error {
	var list []cardYAML
	dec := yaml.NewDecoder(bytes.NewReader(raw), yaml.DisallowUnknownField())
	if err := dec.Decode(&list); err != nil {
		return fmt.Errorf("%s: %s", file, yaml.FormatError(err, false, true))
	}
	var errs []string
	for i, y := range list {
		label := fmt.Sprintf("card %d", i+1)
		if y.Name != "" {
			label = fmt.Sprintf("card %q", y.Name)
		}
		card, fieldErrs := y.toDomain()
		fieldErrs = append(fieldErrs, card.Validate()...)
		if _, dup := cards[card.Name]; dup && card.Name != "" {
			fieldErrs = append(fieldErrs, domain.FieldError{Field: "name", Message: "is defined twice"})
		}
		for _, fe := range dedupe(fieldErrs) {
			errs = append(errs, fmt.Sprintf("%s: %s: %s %s", file, label, fe.Field, fe.Message))
		}
		cards[card.Name] = card
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

func (y cardYAML) toDomain() (domain.Card, []domain.FieldError) {
	var errs []domain.FieldError
	dur := func(field, v string) time.Duration {
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, domain.FieldError{Field: field, Message: fmt.Sprintf("%q is not a duration such as 30s, 5m or 24h", v)})
		}
		return d
	}
	classes := func(field string, vs []string) []domain.ErrorClass {
		var out []domain.ErrorClass
		for _, v := range vs {
			c, err := domain.ParseErrorClass(v)
			if err != nil {
				errs = append(errs, domain.FieldError{Field: field, Message: err.Error()})
				continue
			}
			out = append(out, c)
		}
		return out
	}
	c := domain.Card{Name: y.Name, Description: y.Description, SideEffect: y.SideEffect, Provider: y.Provider,
		ProviderKeyRetention: dur("provider_key_retention", y.ProviderKeyRetention), LookupURL: y.LookupURL,
		LookupAuthoritative: y.LookupAuthoritative, RequiresApproval: y.RequiresApproval,
		Retry: domain.RetryPolicy{MaxAttempts: y.Retry.MaxAttempts, MaxElapsed: dur("retry.max_elapsed", y.Retry.MaxElapsed),
			Backoff: dur("retry.backoff", y.Retry.Backoff), BackoffMax: dur("retry.backoff_max", y.Retry.BackoffMax)},
		Retryable: classes("retryable", y.Retryable), Terminal: classes("terminal", y.Terminal),
		Lease: dur("lease", y.Lease), Owner: y.Owner, NotifyURL: y.NotifyURL, Unverified: y.Unverified,
		Notify: destinations(y.Notify), EscalateAfter: dur("escalate_after", y.EscalateAfter), Escalate: destinations(y.Escalate),
		NotifyIncludeData:   y.NotifyIncludeData,
		ReconciliationOwner: y.ReconciliationOwner, IDRule: y.IDRule, Receipts: y.Receipts,
		Drill: domain.DrillSettings{Adapter: y.Drill.Adapter, Idempotency: y.Drill.Idempotency, Lookup: y.Drill.Lookup}}
	var adapterErrs []domain.FieldError
	c.LookupAdapter, adapterErrs = y.LookupAdapter.toDomain()
	errs = append(errs, adapterErrs...)
	c.ExecuteAdapter, adapterErrs = y.ExecuteAdapter.toDomain()
	errs = append(errs, adapterErrs...)
	c.ExecuteEndpoint, adapterErrs = y.ExecuteEndpoint.toDomain()
	errs = append(errs, adapterErrs...)
	c.KeyPattern, c.ProviderConcurrency, c.Summary = y.KeyPattern, y.ProviderConcurrency, y.Summary
	c.CallTimeout = dur("call_timeout", y.CallTimeout)
	c.Identity = y.Identity
	if y.Echo != nil {
		c.Echo = &domain.Echo{Source: y.Echo.Source, Within: dur("echo.within", y.Echo.Within)}
	}
	switch y.Twins {
	case "", "hold":
	case "allow":
		c.TwinsAllowed = true
	default:
		errs = append(errs, domain.FieldError{Field: "twins", Message: "must be hold or allow"})
	}
	if y.RetryLayer == "" {
		y.RetryLayer = "handoff"
	}
	if c.ReconciliationOwner == "" {
		c.ReconciliationOwner = c.Owner
	}
	if y.Lease == "" {
		c.Lease = 30 * time.Second
	}
	if y.Retry.BackoffMax == "" {
		c.Retry.BackoffMax = max(c.Retry.Backoff, 5*time.Minute)
	}
	if y.Lookup == "" {
		y.Lookup = "none"
	}
	var err error
	if c.RetryLayer, err = domain.ParseRetryLayer(y.RetryLayer); err != nil {
		errs = append(errs, domain.FieldError{Field: "retry_layer", Message: err.Error()})
	}
	if c.ProviderIdempotency, err = domain.ParseProviderIdempotency(y.ProviderIdempotency); err != nil && y.ProviderIdempotency != "" {
		errs = append(errs, domain.FieldError{Field: "provider_idempotency", Message: err.Error()})
	}
	if c.Lookup, err = domain.ParseLookupMethod(y.Lookup); err != nil {
		errs = append(errs, domain.FieldError{Field: "lookup", Message: err.Error()})
	}
	if y.ContentVisibleTo != "" {
		if c.ContentVisibleTo, err = domain.ParseRole(y.ContentVisibleTo); err != nil {
			errs = append(errs, domain.FieldError{Field: "content_visible_to", Message: "must be a role: viewer, operator, approver, admin or auditor"})
		}
	}
	return c, errs
}

// dedupe drops repeated complaints about one field (a bad duration is also
// reported by Validate as missing).
func dedupe(errs []domain.FieldError) []domain.FieldError {
	seen := map[string]bool{}
	var out []domain.FieldError
	for _, e := range errs {
		if !seen[e.Field] {
			seen[e.Field] = true
			out = append(out, e)
		}
	}
	return out
}
