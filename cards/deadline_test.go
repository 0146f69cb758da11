package cards_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/cards"
)

// The card's call_timeout: read as a duration, twice the lease when absent,
// and refused — card, field and reason named — when it is no duration, out
// of range, or too short to cover a call on a card whose lookups may
// conclude that the call did not happen.
func TestLoad_CallTimeout(t *testing.T) {
	const base = "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, lease: 30s"
	load := func(t *testing.T, yaml string) error {
		t.Helper()
		file := filepath.Join(t.TempDir(), "types.yaml")
		if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := cards.Load(file)
		return err
	}
	for _, tt := range []struct{ name, yaml, want string }{
		{"not a duration", base + ", call_timeout: soon}", `types.yaml: card "a.b": call_timeout "soon" is not a duration`},
		{"negative", base + ", call_timeout: -5s}", `types.yaml: card "a.b": call_timeout must be between 1s and 24h`},
		{"under a second", base + ", call_timeout: 10ms}", `types.yaml: card "a.b": call_timeout must be between 1s and 24h`},
		{"over a day", base + ", call_timeout: 25h}", `types.yaml: card "a.b": call_timeout must be between 1s and 24h`},
		{"shorter than the lease on an authoritative card", base + ", lookup: api, lookup_authoritative: true, call_timeout: 10s}",
			`types.yaml: card "a.b": call_timeout 10s is shorter than lease (30s) on a card with lookup_authoritative`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := load(t, tt.yaml); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Load = %v, want an error with %q", err, tt.want)
			}
		})
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "types.yaml")
	ok := base + ", name: stated, lookup: api, lookup_authoritative: true, call_timeout: 2m}\n" +
		base + ", name: unsure, lookup: api, call_timeout: 10s}\n" + base + ", name: absent}"
	ok = strings.ReplaceAll(ok, "{name: a.b, ", "{")
	if err := os.WriteFile(file, []byte(ok), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := cards.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]time.Duration{"stated": 2 * time.Minute, "unsure": 10 * time.Second, "absent": time.Minute} {
		if got := cs[name].CallTimeoutOrDefault(); got != want {
			t.Errorf("%s: call timeout %s, want %s", name, got, want)
		}
	}
}
