package cards_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/cards"
	"github.com/opshandoff/handoff/domain"
)

const identityCard = "- {name: a.b, provider: p, provider_idempotency: none, retry: {max_attempts: 1, backoff: 1s}"

// TestLoad_IdentityAndEcho: the identity and echo lines as a card file
// writes them.
func TestLoad_IdentityAndEcho(t *testing.T) {
	file := filepath.Join(t.TempDir(), "types.yaml")
	yaml := identityCard + ", identity: [/order, /amount, /customer/id], echo: {source: crm-webhook, within: 10m}}"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := cards.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	c := cs["a.b"]
	if !slices.Equal(c.Identity, []string{"/order", "/amount", "/customer/id"}) || c.Echo == nil ||
		*c.Echo != (domain.Echo{Source: "crm-webhook", Within: 10 * time.Minute}) {
		t.Fatalf("identity %v, echo %+v", c.Identity, c.Echo)
	}
}

// TestLoad_IdentityAndEchoMisuse: `handoff cards check` refuses each misuse
// of the identity and echo lines, naming the file, the card, the field and
// the reason.
func TestLoad_IdentityAndEchoMisuse(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"empty identity", identityCard + ", identity: []}", `card "a.b": identity must list at least one JSON pointer`},
		{"not a pointer", identityCard + ", identity: [order]}", `card "a.b": identity[0] "order" is not a JSON pointer`},
		{"empty pointer", identityCard + ", identity: [/order, '']}", `card "a.b": identity[1] "" is not a JSON pointer`},
		{"bad escape", identityCard + ", identity: [/a~2b]}", `card "a.b": identity[0] "/a~2b" is not a JSON pointer`},
		{"pointer twice", identityCard + ", identity: [/order, /order]}", `card "a.b": identity[1] "/order" is listed twice`},
		{"echo without window", identityCard + ", echo: {source: crm-webhook}}", `card "a.b": echo.within is required`},
		{"echo zero window", identityCard + ", echo: {source: crm-webhook, within: 0s}}", `card "a.b": echo.within is required`},
		{"echo negative window", identityCard + ", echo: {source: crm-webhook, within: -5m}}", `card "a.b": echo.within must be positive`},
		{"echo window not a duration", identityCard + ", echo: {source: crm-webhook, within: soon}}", `card "a.b": echo.within "soon" is not a duration`},
		{"echo window too long", identityCard + ", echo: {source: crm-webhook, within: 8000h}}", `card "a.b": echo.within must be at most 720h0m0s`},
		{"echo without source", identityCard + ", echo: {within: 10m}}", `card "a.b": echo.source is required`},
		{"echo with twins allowed", identityCard + ", twins: allow, echo: {source: crm-webhook, within: 10m}}", `card "a.b": echo cannot be used with twins: allow`},
		{"echo unknown field", identityCard + ", echo: {source: crm-webhook, window: 10m}}", `unknown field "window"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "types.yaml")
			if err := os.WriteFile(file, []byte(tt.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := cards.Load(file)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "types.yaml") {
				t.Fatalf("Load = %v, want an error naming types.yaml and %q", err, tt.want)
			}
		})
	}
}
