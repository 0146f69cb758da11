package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCardsCheckRefusesAnUnboundFound: `handoff cards check` refuses a
// lookup adapter whose found nothing binds to the operation, naming the
// card, the field and the reason; with found.key the same card passes.
func TestCardsCheckRefusesAnUnboundFound(t *testing.T) {
	card := `- name: mail.send
  provider: postbox
  provider_idempotency: none
  lookup: api
  retry: {max_attempts: 1, backoff: 1s}
  lookup_adapter:
    request: {method: GET, url: "https://mail.example.com/v1/messages?key={provider_key}"}
    found: {status: [200], ref: /data/0/id, when_nonempty: /data}
`
	check := func(yaml string) (string, error) {
		p := filepath.Join(t.TempDir(), "cards.yaml")
		if err := os.WriteFile(p, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		err := run(context.Background(), []string{"cards", "check", p}, &out, &errOut)
		return out.String(), err
	}
	_, err := check(card)
	want := `cards.yaml: card "mail.send": lookup_adapter.found must bind a found record to this operation: ` +
		`name found.key (where the record holds the provider key) or at least one found.compare rule`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("cards check: %v; want it to say %q", err, want)
	}
	out, err := check(strings.Replace(card, "ref: /data/0/id,", "ref: /data/0/id, key: /data/0/key,", 1))
	if err != nil || !strings.Contains(out, "ok  mail.send") || !strings.Contains(out, "found bound by found.key /data/0/key") {
		t.Fatalf("with found.key: %v\n%s", err, out)
	}
}
