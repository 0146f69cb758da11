package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADME_ConfigIsValid: the configuration the MCP guide shows is one
// `handoff mcp check` accepts.
func TestREADME_ConfigIsValid(t *testing.T) {
	raw, err := os.ReadFile("../docs/guides/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "# For AI agents: MCP")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal(`docs/guides/mcp.md has no yaml block`)
	}
	file := filepath.Join(t.TempDir(), "mcp.yaml")
	if err := os.WriteFile(file, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadConfig(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Upstreams) != 2 || cfg.Upstreams[1].Tools[0].Key.Argument == "" {
		t.Fatalf("the guide should show a command upstream and an HTTP one with an idempotency-key argument: %+v", cfg.Upstreams)
	}
}
