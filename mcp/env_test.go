package mcp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestUpstreamEnv_withholdsTheToken: a command upstream is started with an
// explicit environment. The process it starts (here a shell that writes its
// environment to a file and exits) sees the base, pass_env and env, and
// neither Handoff's token nor anything else of ours.
func TestUpstreamEnv_withholdsTheToken(t *testing.T) {
	t.Setenv("HANDOFF_TOKEN", "hnd_secret_token_value")
	t.Setenv("DATABASE_PASSWORD", "hunter2")
	t.Setenv("GITHUB_TOKEN", "ghp_passed_on_purpose")
	dump := filepath.Join(t.TempDir(), "env")
	cfg := UpstreamConfig{
		Name:    "dumper",
		Command: []string{"sh", "-c", "env > " + dump},
		Env:     map[string]string{"ROOT_DIR": "/srv/files"},
		PassEnv: []string{"GITHUB_TOKEN"},
	}
	_, err := connectUpstream(context.Background(), cfg, &sdk.Implementation{Name: "test", Version: "1"}, "HANDOFF_TOKEN")
	if err == nil {
		t.Fatal("a shell that exits is not an MCP server, yet connecting succeeded")
	}
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the upstream did not run: %v", err)
	}
	env := string(raw)
	for _, secret := range []string{"hnd_secret_token_value", "HANDOFF_TOKEN", "hunter2"} {
		if strings.Contains(env, secret) {
			t.Errorf("the upstream's environment holds %q:\n%s", secret, env)
		}
	}
	for _, want := range []string{"GITHUB_TOKEN=ghp_passed_on_purpose", "ROOT_DIR=/srv/files", "PATH="} {
		if !strings.Contains(env, want) {
			t.Errorf("the upstream's environment lacks %q:\n%s", want, env)
		}
	}
}

func TestUpstreamEnv_tokenNeverPassedEvenWhenAsked(t *testing.T) {
	environ := []string{"PATH=/bin", "HANDOFF_MCP_TOKEN=secret", "OTHER=x"}
	got := upstreamEnv(environ, UpstreamConfig{PassEnv: []string{"HANDOFF_MCP_TOKEN", "OTHER"},
		Env: map[string]string{"HANDOFF_MCP_TOKEN": "set"}}, "HANDOFF_MCP_TOKEN")
	if strings.Contains(strings.Join(got, "\n"), "HANDOFF_MCP_TOKEN") {
		t.Fatalf("the token's variable was passed on: %v", got)
	}
	if strings.Join(got, " ") != "OTHER=x PATH=/bin" {
		t.Fatalf("got %v", got)
	}
}

func TestLoadConfig_refusesToPassTheToken(t *testing.T) {
	head := "handoff: {url: \"http://127.0.0.1:8080\", token_env: HANDOFF_MCP_TOKEN}\nupstreams:\n  - name: files\n    command: [npx, server]\n"
	for name, c := range map[string]struct{ lines, want string }{
		"pass_env_token": {"    pass_env: [HANDOFF_MCP_TOKEN]\n", `upstream "files": pass_env: HANDOFF_MCP_TOKEN holds Handoff's workflow token`},
		"env_token":      {"    env: {HANDOFF_MCP_TOKEN: x}\n", `upstream "files": pass_env: HANDOFF_MCP_TOKEN holds`},
		"bad_name":       {"    pass_env: [\"A B\"]\n", `upstream "files": pass_env: "A B" is not`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadConfig(writeConfig(t, head+c.lines))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	url := "handoff: {url: \"http://127.0.0.1:8080\"}\nupstreams:\n  - name: crm\n    url: http://127.0.0.1:9/mcp\n    pass_env: [X]\n"
	if _, err := LoadConfig(writeConfig(t, url)); err == nil || !strings.Contains(err.Error(), "pass_env: only for a command") {
		t.Fatalf("pass_env on a URL upstream: %v", err)
	}
}
