package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/sandbox"
)

// TestLookupCommand: `handoff lookup TYPE KEY` runs the card's adapter
// once against the provider, sends the secret from auth_env, and prints
// what it read and what Handoff would do — never the secret. Without
// HANDOFF_LOOKUP_ALLOW_PRIVATE a loopback provider is refused.
func TestLookupCommand(t *testing.T) {
	sbx, _ := sandbox.New(sandbox.Config{Lookup: sandbox.LookupAuthoritative})
	var auth string
	crm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		sbx.Handler().ServeHTTP(w, r)
	}))
	defer crm.Close()
	key := domain.ProviderKeyFor("default", "evt_1:crm")
	resp, err := http.Post(crm.URL+"/execute", "application/json", strings.NewReader(`{"key":"`+key+`","params":{"subject":"call"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cardsFile := filepath.Join(t.TempDir(), "cards.yaml")
	card := `- name: crm.task.create
  provider: acme-crm
  provider_idempotency: none
  lookup: api
  retry: {max_attempts: 3, backoff: 1s}
  lookup_adapter:
    request: {method: GET, url: "` + crm.URL + `/v1/records?external_id={provider_key}", auth_env: CRM_TOKEN}
    found: {status: [200], ref: /data/0/id, when_nonempty: /data, compare: [{answer: /data/0/params/subject, content: /subject}]}
    window: 1m
`
	if err := os.WriteFile(cardsFile, []byte(card), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HANDOFF_CARDS", cardsFile)
	t.Setenv("CRM_TOKEN", "tok_cli_secret_99")
	var out, errOut bytes.Buffer
	args := []string{"lookup", "crm.task.create", "evt_1:crm", "--content", `{"subject":"call"}`}
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "refused") || sbx.Lookups(key) != 0 {
		t.Fatalf("a loopback provider without HANDOFF_LOOKUP_ALLOW_PRIVATE:\n%s", out.String())
	}
	t.Setenv("HANDOFF_LOOKUP_ALLOW_PRIVATE", "true")
	out.Reset()
	if err := run(context.Background(), args, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "GET "+crm.URL+"/v1/records?external_id="+key) || !strings.Contains(got, "200 found sbx_1") ||
		!strings.Contains(got, "would:   complete the operation with reference sbx_1") {
		t.Fatalf("output:\n%s", got)
	}
	if auth != "Bearer tok_cli_secret_99" || strings.Contains(got+errOut.String(), "tok_cli_secret_99") {
		t.Fatalf("the provider saw %q; the output must not show the secret:\n%s", auth, got)
	}
	out.Reset()
	if err := run(context.Background(), []string{"lookup", "crm.task.create", "evt_1:crm", "--content", `{"subject":"other"}`}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "conflict") || !strings.Contains(out.String(), "hand it to a person at once") {
		t.Fatalf("other content:\n%s", out.String())
	}
}
