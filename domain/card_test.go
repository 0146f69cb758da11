package domain_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

func TestCardValidateAcceptsAGoodCard(t *testing.T) {
	if errs := testCard().Validate(); len(errs) != 0 {
		t.Fatalf("Validate() = %v, want no errors", errs)
	}
	keyCard := testCard()
	keyCard.ProviderIdempotency, keyCard.ProviderKeyRetention = domain.IdempotencyKey, 24*time.Hour
	keyCard.Lookup, keyCard.LookupURL, keyCard.LookupAuthoritative = domain.LookupManual, "", true
	keyCard.NotifyURL = ""
	keyCard.Retry.MaxElapsed = 0
	keyCard.Name = strings.Repeat("a", 100)
	if errs := keyCard.Validate(); len(errs) != 0 {
		t.Fatalf("Validate() = %v, want no errors", errs)
	}
}

// TestCardValidate: each bad value is reported under the field name used in
// the YAML file, and only under it.
func TestCardValidate(t *testing.T) {
	for _, tt := range []struct {
		name  string
		field string
		bad   func(*domain.Card)
	}{
		{"empty_name", "name", func(c *domain.Card) { c.Name = "" }},
		{"upper_case_name", "name", func(c *domain.Card) { c.Name = "CRM.task" }},
		{"name_with_space", "name", func(c *domain.Card) { c.Name = "crm task" }},
		{"name_starting_with_dot", "name", func(c *domain.Card) { c.Name = ".crm" }},
		{"name_too_long", "name", func(c *domain.Card) { c.Name = strings.Repeat("a", 101) }},
		{"blank_provider", "provider", func(c *domain.Card) { c.Provider = "  " }},
		{"no_provider_idempotency", "provider_idempotency", func(c *domain.Card) { c.ProviderIdempotency = domain.ProviderIdempotency{} }},
		{"key_without_retention", "provider_key_retention", func(c *domain.Card) { c.ProviderIdempotency = domain.IdempotencyKey }},
		{"key_and_params_without_retention", "provider_key_retention", func(c *domain.Card) { c.ProviderIdempotency = domain.IdempotencyKeyAndParams }},
		{"negative_retention", "provider_key_retention", func(c *domain.Card) { c.ProviderKeyRetention = -time.Second }},
		{"negative_retention_with_key", "provider_key_retention", func(c *domain.Card) {
			c.ProviderIdempotency, c.ProviderKeyRetention = domain.IdempotencyKey, -time.Hour
		}},
		{"no_lookup", "lookup", func(c *domain.Card) { c.Lookup = domain.LookupMethod{} }},
		{"lookup_url_not_http", "lookup_url", func(c *domain.Card) { c.LookupURL = "ftp://crm.example.com/{provider_key}" }},
		{"lookup_url_without_host", "lookup_url", func(c *domain.Card) { c.LookupURL = "https:///tasks/{provider_key}" }},
		{"lookup_url_relative", "lookup_url", func(c *domain.Card) { c.LookupURL = "/tasks?id={provider_key}" }},
		{"lookup_url_host_is_the_key", "lookup_url", func(c *domain.Card) { c.LookupURL = "https://{provider_key}" }},
		{"lookup_url_host_ends_with_the_key", "lookup_url", func(c *domain.Card) { c.LookupURL = "https://crm.example.com.{provider_key}/x" }},
		{"lookup_url_userinfo_is_the_key", "lookup_url", func(c *domain.Card) { c.LookupURL = "https://{provider_key}@crm.example.com/x" }},
		{"lookup_url_port_is_the_key", "lookup_url", func(c *domain.Card) { c.LookupURL = "https://crm.example.com:{provider_key}/x" }},
		{"lookup_url_fragment_is_the_key", "lookup_url", func(c *domain.Card) { c.LookupURL = "https://crm.example.com/x#{provider_key}" }},
		{"authoritative_without_lookup", "lookup_authoritative", func(c *domain.Card) {
			c.Lookup, c.LookupURL, c.LookupAuthoritative = domain.LookupNone, "", true
		}},
		{"zero_max_attempts", "retry.max_attempts", func(c *domain.Card) { c.Retry.MaxAttempts = 0 }},
		{"too_many_attempts", "retry.max_attempts", func(c *domain.Card) { c.Retry.MaxAttempts = 1001 }},
		{"negative_max_elapsed", "retry.max_elapsed", func(c *domain.Card) { c.Retry.MaxElapsed = -time.Minute }},
		{"zero_backoff", "retry.backoff", func(c *domain.Card) { c.Retry.Backoff = 0 }},
		{"backoff_max_below_backoff", "retry.backoff_max", func(c *domain.Card) { c.Retry.BackoffMax = time.Second }},
		{"class_retryable_and_terminal", "retryable", func(c *domain.Card) {
			c.Retryable = append(c.Retryable, domain.ClassValidation)
		}},
		{"lease_too_short", "lease", func(c *domain.Card) { c.Lease = 500 * time.Millisecond }},
		{"lease_too_long", "lease", func(c *domain.Card) { c.Lease = time.Hour + time.Second }},
		{"notify_url_not_http", "notify_url", func(c *domain.Card) { c.NotifyURL = "mailto:oncall@example.com" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := testCard()
			tt.bad(&c)
			errs := c.Validate()
			if len(errs) == 0 {
				t.Fatalf("Validate() accepted the card")
			}
			for _, e := range errs {
				if e.Field != tt.field || e.Message == "" {
					t.Fatalf("Validate() = %v, want every error on %q with a message", errs, tt.field)
				}
			}
		})
	}
}

func TestCardValidateListsEveryProblem(t *testing.T) {
	c := domain.Card{Retry: domain.RetryPolicy{Backoff: time.Second}}
	var got []string
	for _, e := range c.Validate() {
		got = append(got, e.Field)
	}
	want := []string{"name", "provider", "provider_idempotency", "lookup", "retry.max_attempts", "retry.backoff_max", "lease"}
	if !slices.Equal(got, want) {
		t.Fatalf("fields = %v, want %v", got, want)
	}
}

func TestCardHelpers(t *testing.T) {
	c := testCard()
	if !c.IsTerminal(domain.ClassValidation) || c.IsTerminal(domain.ClassTimeout) {
		t.Errorf("IsTerminal does not follow the card")
	}
	if !c.IsRetryable(domain.ClassRateLimited) || c.IsRetryable(domain.ClassValidation) {
		t.Errorf("IsRetryable does not follow the card")
	}
	if got, want := c.LookupLink("hk_a b&c"), "https://crm.example.com/tasks?external_id=hk_a+b%26c"; got != want {
		t.Errorf("LookupLink = %q, want %q", got, want)
	}
	// In the path the key is one escaped segment: it cannot add segments,
	// start a query or reach the host.
	c.LookupURL = "https://crm.example.com/tasks/{provider_key}/view?again={provider_key}"
	if got, want := c.LookupLink("../@evil.example/a b?x#y"), "https://crm.example.com/tasks/..%2F@evil.example%2Fa%20b%3Fx%23y/view?again=..%2F%40evil.example%2Fa+b%3Fx%23y"; got != want {
		t.Errorf("LookupLink = %q, want %q", got, want)
	}
	c.LookupURL = ""
	if got := c.LookupLink("hk_1"); got != "" {
		t.Errorf("LookupLink without a URL = %q", got)
	}
	cards := domain.Cards{"b.type": {Name: "b.type"}, "a.type": {Name: "a.type"}}
	if _, err := cards.Get("nope"); domain.ErrorCode(err) != domain.EUnknownType {
		t.Errorf("Get(unknown) = %v, want unknown_type", err)
	}
	if got, err := cards.Get("a.type"); err != nil || got.Name != "a.type" {
		t.Errorf("Get(a.type) = %v, %v", got, err)
	}
	if s := cards.Sorted(); len(s) != 2 || s[0].Name != "a.type" || s[1].Name != "b.type" {
		t.Errorf("Sorted() = %v", s)
	}
	for _, v := range []string{"none", "key", "key_and_params"} {
		if p, err := domain.ParseProviderIdempotency(v); err != nil || p.String() != v {
			t.Errorf("ParseProviderIdempotency(%q) = %v, %v", v, p, err)
		}
	}
	if _, err := domain.ParseLookupMethod("sometimes"); err == nil {
		t.Errorf("ParseLookupMethod accepted an unknown method")
	}
}
