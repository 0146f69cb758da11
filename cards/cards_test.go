package cards_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/cards"
	"github.com/opshandoff/handoff/domain"
)

func TestExamplesLoad(t *testing.T) {
	cs, err := cards.Examples()
	if err != nil {
		t.Fatal(err)
	}
	c, err := cs.Get("crm.task.create")
	if err != nil {
		t.Fatal(err)
	}
	if c.ProviderIdempotency != domain.IdempotencyKey || c.ProviderKeyRetention != 24*time.Hour ||
		c.Retry.MaxAttempts != 5 || !c.IsTerminal(domain.ClassAuth) || !c.IsRetryable(domain.ClassRateLimited) {
		t.Fatalf("card read wrong: %+v", c)
	}
	if _, err := cs.Get("coupon.issue"); err != nil {
		t.Fatal(err)
	}
}

// Every bundled example fills in seed 003's template, and can be drilled.
func TestExamples_UseTheWholeTemplate(t *testing.T) {
	cs, err := cards.Examples()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Sorted() {
		if c.Drill.Adapter != domain.DrillAdapterSandbox || c.IDRule == "" || c.Receipts == "" ||
			c.ReconciliationOwner == "" || c.RetryLayer == (domain.RetryLayer{}) {
			t.Errorf("%s leaves part of the template empty: %+v", c.Name, c)
		}
	}
	c, _ := cs.Get("email.send")
	if c.Retrier() != domain.RetryByHandoff || c.DrillIdempotency() != "none" || c.DrillLookup() != "authoritative" || c.IDRule != "<event_id>:email:<template>" {
		t.Fatalf("email.send read wrong: %+v", c)
	}
}

func TestLoad_TemplateDefaults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("- {name: a.b, provider: p, provider_idempotency: key, provider_key_retention: 1h, lookup: api, owner: ops, retry: {max_attempts: 1, backoff: 1s}}"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := cards.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := cs.Get("a.b")
	if c.Retrier() != domain.RetryByHandoff || c.ReconciliationOwner != "ops" || c.DrillIdempotency() != "key" || c.DrillLookup() != "unsure" || c.Drill.Adapter != "" {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestLoad_ContentVisibleTo(t *testing.T) {
	file := filepath.Join(t.TempDir(), "types.yaml")
	yaml := "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, content_visible_to: approver}"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := cards.Load(file)
	if err != nil || cs["a.b"].ContentVisibleTo != domain.RoleApprover {
		t.Fatalf("content_visible_to: %+v %v", cs["a.b"], err)
	}
}

func TestLoad_ErrorsNameFileCardAndField(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"bad duration", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: soon}}", `card "a.b": retry.backoff "soon" is not a duration`},
		{"bad class", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, terminal: [oops]}", `card "a.b": terminal unknown error class "oops"`},
		{"missing provider", "- {name: a.b, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}}", `card "a.b": provider is required`},
		{"retention needed", "- {name: a.b, provider: p, provider_idempotency: key, retry: {max_attempts: 1, backoff: 1s}}", `card "a.b": provider_key_retention is required`},
		{"unknown field", "- {name: a.b, providr: p}", `unknown field "providr"`},
		{"duplicate", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}}\n- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}}", `card "a.b": name is defined twice`},
		{"bad notify format", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, notify: [{url: 'https://h.example.com', format: teams}]}", `card "a.b": notify[0].format must be standard or slack`},
		{"bad notify url", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, notify: [{url: 'ftp://h'}]}", `card "a.b": notify[0].url must be an http(s) URL`},
		{"escalate without delay", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, escalate: [{url: 'https://p.example.com'}]}", `card "a.b": escalate_after is required`},
		{"both notify forms", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, notify_url: 'https://a.example.com', notify: [{url: 'https://h.example.com'}]}", `card "a.b": notify_url cannot be used together with notify`},
		{"bad retry layer", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, retry_layer: both}", `card "a.b": retry_layer unknown retry_layer "both"`},
		{"bad drill lookup", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, drill: {adapter: sandbox, lookup: maybe}}", `card "a.b": drill.lookup must be none, authoritative or unsure`},
		{"bad drill idempotency", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, drill: {adapter: sandbox, idempotency: twice}}", `card "a.b": drill.idempotency must be`},
		{"no name", "- {provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}}", `card 1: name must be`},
		{"bad key_pattern", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, key_pattern: '^evt_(['}", `card "a.b": key_pattern must be a regular expression`},
		{"bad twins", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, twins: sometimes}", `card "a.b": twins must be hold or allow`},
		{"bad provider_concurrency", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, provider_concurrency: maybe}", `card "a.b": provider_concurrency must be serialises, rejects or unknown`},
		{"bad provider_idempotency", "- {name: a.b, provider: p, provider_idempotency: sometimes, retry: {max_attempts: 1, backoff: 1s}}", `card "a.b": provider_idempotency`},
		{"content_visible_to unknown role", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, content_visible_to: root}",
			`card "a.b": content_visible_to must be a role`},
		{"unsigned with a secret", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, notify: [{url: 'https://h.example.com', secret_env: S, unsigned: true}]}",
			`card "a.b": notify[0].unsigned cannot be true with a secret_env`},
		// notify_include_data must not send what content_visible_to hides
		// to a destination not marked as allowed to read it.
		{"hidden content to a destination", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, notify_include_data: true, content_visible_to: operator, notify: [{url: 'https://h.example.com', secret_env: S}, {url: 'https://ok.example.com', secret_env: S, sees_hidden_content: true}]}",
			`card "a.b": notify[0].sees_hidden_content must be true: notify_include_data would send it content that content_visible_to: operator hides`},
		{"hidden content to an escalation", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, notify_include_data: true, content_visible_to: approver, escalate_after: 1m, escalate: [{url: 'https://p.example.com', format: slack}]}",
			`card "a.b": escalate[0].sees_hidden_content must be true`},
		{"hidden content to notify_url", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, notify_include_data: true, content_visible_to: operator, notify_url: 'https://h.example.com'}",
			`card "a.b": notify_include_data would send content that content_visible_to: operator hides`},
		// What `handoff cards check` prints when a provider key could pick the link's host.
		{"lookup_url host placeholder", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, lookup: manual, lookup_url: 'https://{provider_key}'}",
			`card "a.b": lookup_url may use {provider_key} only in the path or the query, not in the scheme, host or port: there a workflow's provider key could choose where the desk's link points`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "types.yaml")
			if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, p := range []string{file, dir} {
				_, err := cards.Load(p)
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "types.yaml") {
					t.Fatalf("Load(%s) = %v, want an error naming types.yaml and %q", p, err, tt.want)
				}
			}
		})
	}
}

// TestNotifyFields: the notify list (format defaulting to standard),
// escalate_after with escalate, and the notify_url shorthand, which
// HANDOFF_NOTIFY_URL's default does not override.
func TestNotifyFields(t *testing.T) {
	yaml := `
- name: a.b
  provider: p
  provider_idempotency: none
  retry: {max_attempts: 1, backoff: 1s}
  notify:
    - {url: "https://hooks.example.com/h", secret_env: HOOK_SECRET}
    - {url: "https://hooks.slack.com/services/T/B/x", format: slack}
  escalate_after: 30m
  escalate: [{url: "https://pager.example.com/", secret_env: PAGER_SECRET}]
- name: c.d
  provider: p
  provider_idempotency: none
  retry: {max_attempts: 1, backoff: 1s}
  notify_url: https://legacy.example.com/
- name: e.f
  provider: p
  provider_idempotency: none
  retry: {max_attempts: 1, backoff: 1s}
`
	file := filepath.Join(t.TempDir(), "types.yaml")
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := cards.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	cs = cs.WithDefaultNotify("https://default.example.com/")
	ab := cs["a.b"]
	if len(ab.Notify) != 2 || ab.Notify[0] != (domain.Destination{URL: "https://hooks.example.com/h", SecretEnv: "HOOK_SECRET", Format: "standard"}) ||
		ab.Notify[1].Format != "slack" || ab.EscalateAfter != 30*time.Minute || len(ab.Escalate) != 1 || ab.Escalate[0].SecretEnv != "PAGER_SECRET" {
		t.Fatalf("a.b: %+v", ab)
	}
	if d := cs["c.d"].Destinations(); len(d) != 1 || d[0].URL != "https://legacy.example.com/" || d[0].SecretEnv != "HANDOFF_NOTIFY_SECRET" {
		t.Fatalf("c.d: %+v", d)
	}
	if d := cs["e.f"].Destinations(); len(d) != 1 || d[0].URL != "https://default.example.com/" || d[0].SecretEnv != "HANDOFF_NOTIFY_SECRET" {
		t.Fatalf("e.f: %+v", d)
	}
}

// TestLoad_DuplicatePathFields: retry_layer none, provider_idempotency
// unknown (no retention needed), key_pattern, twins and
// provider_concurrency are read.
func TestLoad_DuplicatePathFields(t *testing.T) {
	file := filepath.Join(t.TempDir(), "types.yaml")
	yaml := "- {name: a.b, provider: p, provider_idempotency: unknown, retry: {max_attempts: 2, backoff: 1s}, retry_layer: none, " +
		"key_pattern: '^evt_[0-9]+:a$', twins: allow, provider_concurrency: rejects}"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := cards.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	c := cs["a.b"]
	if c.Retrier() != domain.RetryByNobody || c.ProviderIdempotency != domain.IdempotencyUnknown || !c.TwinsAllowed ||
		c.Concurrency() != domain.ConcurrencyRejects || !c.KeyMatches("evt_1:a") || c.KeyMatches("evt_x:a") || c.AutoResendOff() == "" {
		t.Fatalf("card: %+v", c)
	}
}

// A card's summary fields and each destination's kinds are read from
// their lines; an unknown kind is refused.
func TestLoad_SummaryAndEvents(t *testing.T) {
	file := filepath.Join(t.TempDir(), "types.yaml")
	yaml := "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, summary: [/amount, /customer]," +
		" notify: [{url: 'https://hooks.slack.com/services/x', format: slack, events: [incident.*, operation.escalated]}]}"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := cards.Load(file)
	if err != nil || len(cs["a.b"].Summary) != 2 || cs["a.b"].Summary[1] != "/customer" ||
		cs["a.b"].Notify[0].Events != "incident.*,operation.escalated" {
		t.Fatalf("summary and events: %+v %v", cs["a.b"], err)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(yaml, "operation.escalated", "operation.escalate", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cards.Load(file); err == nil || !strings.Contains(err.Error(), "events") {
		t.Fatalf("an unknown kind: %v", err)
	}
}
