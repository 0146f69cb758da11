package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// nodeDir holds the npm packages of the MCP peers nobody here wrote: the
// official TypeScript SDK's client and the reference filesystem server.
const nodeDir = "testdata/mcp"

// needNodePeers skips when the npm packages are not installed — except in
// CI, which installs them (`npm ci` in e2e/testdata/mcp) and must run this.
func needNodePeers(t *testing.T) {
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "server-filesystem")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the MCP npm packages are not installed: run `npm ci` in e2e/%s (%v)", nodeDir, err)
		}
		t.Skipf("the MCP npm packages are not installed; run `npm ci` in e2e/%s to run this test", nodeDir)
	}
}

// agentAnswer is one tool answer as agent.mjs prints it.
type agentAnswer struct {
	IsError bool           `json:"isError"`
	Text    string         `json:"text"`
	Meta    map[string]any `json:"meta"`
}

type agentRun struct {
	Tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		Annotations map[string]any `json:"annotations"`
	} `json:"tools"`
	List, First, Second, Other, Move agentAnswer
	Edit                             agentAnswer `json:"edit"`
	EditRetry                        agentAnswer `json:"edit_retry"`
	AfterEdits                       string      `json:"after_edits"`
	AfterSecond                      string      `json:"after_second"`
	AfterOther                       string      `json:"after_other"`
}

// TestMCP_OfficialPeers drives `handoff mcp` with the official TypeScript
// client, over stdio and over streamable HTTP, in front of the real
// filesystem server: list_directory passes through; write_file twice with
// the same arguments writes once and the second answer is the stored
// result; the same key with other content is refused; an unlisted
// destructive tool is refused.
func TestMCP_OfficialPeers(t *testing.T) {
	needNodePeers(t)
	d := startMCPDesk(t)
	server, _ := filepath.Abs(filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js"))
	agentScript, _ := filepath.Abs(filepath.Join(nodeDir, "agent.mjs"))
	// The guarded tools are the MCP guide's own example, in front of the
	// real filesystem server.
	tools := guideTools(t, "files")
	config := func(t *testing.T, dir string) string {
		file := filepath.Join(t.TempDir(), "mcp.yaml")
		cfg := fmt.Sprintf(`handoff: {url: %q, token_env: HANDOFF_MCP_TOKEN}
upstreams:
  - name: files
    command: [node, %q, %q]
    tools: %s
`, d.URL, server, dir, tools)
		if err := os.WriteFile(file, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return file
	}
	env := append(os.Environ(), "HANDOFF_MCP_TOKEN="+d.mcpToken)

	t.Run("stdio", func(t *testing.T) {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		cmd := exec.Command("node", agentScript, "stdio", dir, handoffBinary(t), config(t, dir))
		cmd.Env = env
		checkAgentRun(t, d, dir, cmd)
	})
	t.Run("streamable_http", func(t *testing.T) {
		dir, _ := filepath.EvalSymlinks(t.TempDir())
		addr := freeAddr(t, "127.0.0.1")
		mcpProc := exec.Command(handoffBinary(t), "mcp", "--http", addr, config(t, dir))
		mcpProc.Env = env
		logs := &syncBuffer{}
		mcpProc.Stdout, mcpProc.Stderr = logs, logs
		if err := mcpProc.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = mcpProc.Process.Signal(os.Interrupt)
			_ = mcpProc.Wait()
			if t.Failed() {
				t.Logf("handoff mcp log:\n%s", logs.String())
			}
		})
		for deadline := time.Now().Add(20 * time.Second); !strings.Contains(logs.String(), "handoff mcp listening"); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("handoff mcp --http did not start:\n%s", logs.String())
			}
		}
		cmd := exec.Command("node", agentScript, "http", dir, "http://"+addr+"/mcp")
		cmd.Env = env
		checkAgentRun(t, d, dir, cmd)
	})
}

func checkAgentRun(t *testing.T, d *mcpDesk, dir string, cmd *exec.Cmd) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "readme.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "todo.txt"), []byte("line 1"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("agent.mjs: %v\n%s\n%s", err, out, stderr.String())
	}
	var run agentRun
	if err := json.Unmarshal(out, &run); err != nil {
		t.Fatalf("agent.mjs printed %q: %v", out, err)
	}
	descriptions := map[string]string{}
	for _, tool := range run.Tools {
		descriptions[tool.Name] = tool.Description
		if tool.Name == "write_file" && tool.Annotations["destructiveHint"] != true {
			t.Errorf("tools/list should keep the upstream's annotations: %v", tool.Annotations)
		}
	}
	if !strings.HasPrefix(descriptions["write_file"], "[Guarded by Handoff as fs.file.write") ||
		!strings.HasPrefix(descriptions["move_file"], "[Refused by Handoff") || strings.HasPrefix(descriptions["list_directory"], "[") {
		t.Errorf("tools/list does not mark guarded and refused tools: %v", descriptions)
	}
	if run.List.IsError || !strings.Contains(run.List.Text, "[FILE] readme.txt") {
		t.Errorf("list_directory should pass through: %+v", run.List)
	}
	if run.First.IsError || run.First.Meta["handoff"] == nil || dig(run.First.Meta, "handoff", "replayed") != false {
		t.Errorf("the first write_file: %+v", run.First)
	}
	if run.Second.IsError || dig(run.Second.Meta, "handoff", "replayed") != true || run.Second.Text != run.First.Text {
		t.Errorf("the second write_file should be the stored result, marked replayed: %+v", run.Second)
	}
	if run.AfterSecond != "edited by a person" {
		t.Errorf("the second write_file wrote again: the file says %q", run.AfterSecond)
	}
	if !run.Other.IsError || dig(run.Other.Meta, "handoff", "conflict") != "fingerprint_mismatch" || !strings.Contains(run.Other.Text, "Conflict") ||
		run.AfterOther != "edited by a person" {
		t.Errorf("write_file of the same path with other content should be refused: %+v, file %q", run.Other, run.AfterOther)
	}
	if !run.Move.IsError || !strings.Contains(run.Move.Text, "not made") {
		t.Errorf("move_file (destructive, not configured) should be refused: %+v", run.Move)
	}
	if _, err := os.Stat(filepath.Join(dir, "moved.txt")); err == nil {
		t.Errorf("move_file ran")
	}
	if run.Edit.IsError || run.EditRetry.IsError || dig(run.EditRetry.Meta, "handoff", "replayed") != true ||
		run.AfterEdits != "line 1\nline 2" {
		t.Errorf("edit_file retried should append the line once: %+v %+v, file %q", run.Edit, run.EditRetry, run.AfterEdits)
	}
	// One operation, completed, made by the TypeScript client's session.
	id := fmt.Sprint(dig(run.First.Meta, "handoff", "operation"))
	tl := d.call(t, d.mcpToken, http.MethodGet, "/v1/operations/"+id+"/timeline", nil)
	if !strings.Contains(string(tl.Raw), "mcp e2e-ts-agent/2.0 via files/write_file") {
		t.Errorf("the timeline does not name the agent and tool: %s", tl.Raw)
	}
}

// guideTools is the tools list of the named upstream in the MCP guide's
// example configuration, as one line of YAML flow.
func guideTools(t *testing.T, upstream string) string {
	t.Helper()
	raw, err := os.ReadFile("../docs/guides/mcp.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(raw), "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	var cfg struct {
		Upstreams []struct {
			Name  string           `yaml:"name"`
			Tools []map[string]any `yaml:"tools"`
		} `yaml:"upstreams"`
	}
	if err := yaml.Unmarshal([]byte(block), &cfg); err != nil {
		t.Fatalf("the MCP guide's example: %v", err)
	}
	for _, u := range cfg.Upstreams {
		if u.Name == upstream {
			out, err := json.Marshal(u.Tools) // JSON is YAML flow
			if err != nil {
				t.Fatal(err)
			}
			return string(out)
		}
	}
	t.Fatalf("the MCP guide's example has no upstream %q", upstream)
	return ""
}
