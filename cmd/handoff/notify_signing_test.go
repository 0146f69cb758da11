package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckSigning: a standard destination without a usable secret stops
// start-up with a message naming the operation type and the variable,
// unless it says unsigned: true, which starts with a warning; a malformed
// secret stops start-up too; Slack needs no signature.
func TestCheckSigning(t *testing.T) {
	const card = "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}, %s}\n"
	good := "whsec_" + "c2VjcmV0LXNlY3JldC1zZWNyZXQ="
	cases := []struct {
		name, dest string
		env        map[string]string
		refused    []string // what the refusal names; nil: it starts
		warns      bool
	}{
		{"secret_env set", "notify: [{url: 'https://h.example.com/', secret_env: HOOK_SECRET}]", map[string]string{"HOOK_SECRET": good}, nil, false},
		{"secret_env missing", "notify: [{url: 'https://h.example.com/', secret_env: HOOK_SECRET}]", nil,
			[]string{`"a.b"`, "notify[0]", "HOOK_SECRET", "not set", "unsigned: true"}, false},
		{"secret malformed", "notify: [{url: 'https://h.example.com/', secret_env: HOOK_SECRET}]", map[string]string{"HOOK_SECRET": "whsec_!!!"},
			[]string{`"a.b"`, "HOOK_SECRET", "base64"}, false},
		{"secret_env absent", "notify: [{url: 'https://h.example.com/'}]", nil, []string{`"a.b"`, "notify[0]", "no secret_env"}, false},
		{"unsigned", "notify: [{url: 'https://h.example.com/', unsigned: true}]", nil, nil, true},
		{"slack", "notify: [{url: 'https://hooks.slack.com/x', format: slack}]", nil, nil, false},
		{"escalate missing", "escalate_after: 1m, escalate: [{url: 'https://p.example.com/', secret_env: PAGER}]", nil,
			[]string{"escalate[0]", "PAGER"}, false},
		{"notify_url without HANDOFF_NOTIFY_SECRET", "notify_url: 'https://h.example.com/'", nil,
			[]string{`"a.b"`, "notify_url", "HANDOFF_NOTIFY_SECRET"}, false},
		{"notify_url with HANDOFF_NOTIFY_SECRET", "notify_url: 'https://h.example.com/'", map[string]string{"HANDOFF_NOTIFY_SECRET": good}, nil, false},
		{"HANDOFF_NOTIFY_URL without HANDOFF_NOTIFY_SECRET", "owner: x", map[string]string{"HANDOFF_NOTIFY_URL": "https://d.example.com/"},
			[]string{`"a.b"`, "HANDOFF_NOTIFY_SECRET", "HANDOFF_NOTIFY_UNSIGNED"}, false},
		{"HANDOFF_NOTIFY_URL unsigned", "owner: x", map[string]string{"HANDOFF_NOTIFY_URL": "https://d.example.com/", "HANDOFF_NOTIFY_UNSIGNED": "true"},
			nil, true},
		{"hidden content to the default destination", "notify_include_data: true, content_visible_to: operator",
			map[string]string{"HANDOFF_NOTIFY_URL": "https://d.example.com/", "HANDOFF_NOTIFY_SECRET": good}, []string{"notify_include_data", "operator"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "cards.yaml")
			if err := os.WriteFile(p, []byte(strings.Replace(card, "%s", c.dest, 1)), 0o600); err != nil {
				t.Fatal(err)
			}
			getenv := func(k string) string {
				if k == "HANDOFF_CARDS" {
					return p
				}
				return c.env[k]
			}
			cfg, err := configFromEnv(getenv)
			if err != nil {
				t.Fatal(err)
			}
			cs, err := cfg.loadCards()
			if err != nil {
				t.Fatal(err)
			}
			var log bytes.Buffer
			err = checkSigning(cs, getenv, slog.New(slog.NewTextHandler(&log, nil)))
			if c.refused == nil && err != nil {
				t.Fatalf("refused: %v", err)
			}
			for _, want := range c.refused {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("refusal %v does not say %q", err, want)
				}
			}
			if got := strings.Contains(log.String(), "unsigned"); got != c.warns {
				t.Errorf("warning %v, want %v: %s", got, c.warns, log.String())
			}
		})
	}
}
