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
		{"no name", "- {provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}}", `card 1: name must be`},
		{"content_visible_to unknown role", "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, content_visible_to: root}",
			`card "a.b": content_visible_to must be a role`},
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
