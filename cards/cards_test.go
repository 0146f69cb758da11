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

func TestLoad_ErrorsNameFileCardAndField(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"bad duration", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: soon}}", `card "a.b": retry.backoff "soon" is not a duration`},
		{"bad class", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, terminal: [oops]}", `card "a.b": terminal unknown error class "oops"`},
		{"missing provider", "- {name: a.b, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}}", `card "a.b": provider is required`},
		{"retention needed", "- {name: a.b, provider: p, provider_idempotency: key, retry: {max_attempts: 1, backoff: 1s}}", `card "a.b": provider_key_retention is required`},
		{"unknown field", "- {name: a.b, providr: p}", `unknown field "providr"`},
		{"duplicate", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}}\n- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}}", `card "a.b": name is defined twice`},
		{"bad retry layer", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, retry_layer: both}", `card "a.b": retry_layer unknown retry_layer "both"`},
		{"bad drill lookup", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, drill: {adapter: sandbox, lookup: maybe}}", `card "a.b": drill.lookup must be none, authoritative or unsure`},
		{"bad drill idempotency", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, drill: {adapter: sandbox, idempotency: twice}}", `card "a.b": drill.idempotency must be`},
		{"no name", "- {provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}}", `card 1: name must be`},
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
