package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "mcp.yaml")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

const goodTool = `{name: create_task, type: crm.task.create, key: {from: [account, title]}, content: [account, title, due]}`

func TestLoadConfig_NamesFileToolAndField(t *testing.T) {
	head := "handoff: {url: \"http://127.0.0.1:8080\"}\nupstreams:\n  - name: crm\n    url: http://127.0.0.1:9/mcp\n    tools:\n      - "
	for name, c := range map[string]struct{ tool, want string }{
		"no_type":       {`{name: create_task, key: {from: [account]}, content: [account]}`, `tool "create_task": type:`},
		"no_key":        {`{name: create_task, type: t, content: [account]}`, `tool "create_task": key:`},
		"both_keys":     {`{name: create_task, type: t, key: {from: [a], argument: k}, content: [a]}`, `tool "create_task": key:`},
		"no_content":    {`{name: create_task, type: t, key: {from: [a]}}`, `tool "create_task": content:`},
		"bad_timeout":   {`{name: create_task, type: t, key: {from: [a]}, content: [a], timeout: soon}`, `tool "create_task": timeout:`},
		"bad_class":     {`{name: create_task, type: t, key: {from: [a]}, content: [a], errors: [{match: x, class: oops}]}`, `tool "create_task": errors[0].class:`},
		"bad_regexp":    {`{name: create_task, type: t, key: {from: [a]}, content: [a], errors: [{match: "(", class: auth}]}`, `tool "create_task": errors[0].match:`},
		"bad_on_error":  {`{name: create_task, type: t, key: {from: [a]}, content: [a], on_error: maybe}`, `tool "create_task": on_error:`},
		"unknown_field": {`{name: create_task, type: t, key: {from: [a]}, content: [a], retries: 3}`, `unknown field "retries"`},
		"no_name":       {`{type: t, key: {from: [a]}, content: [a]}`, `tool 1: name:`},
		"listed_twice":  {goodTool + "\n      - " + goodTool, `tool "create_task": name:`},
	} {
		t.Run(name, func(t *testing.T) {
			file := writeConfig(t, head+c.tool+"\n")
			_, err := LoadConfig(file)
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want it to name %s and %q", err, file, c.want)
			}
		})
	}
	if _, err := LoadConfig(writeConfig(t, head+goodTool+"\n")); err != nil {
		t.Fatalf("a good file: %v", err)
	}
}

func TestLoadConfig_Upstreams(t *testing.T) {
	for name, c := range map[string]struct{ body, want string }{
		"none":         {"handoff: {url: x}\nupstreams: []\n", "upstreams:"},
		"both":         {"handoff: {url: x}\nupstreams:\n  - {name: a, url: 'http://h/mcp', command: [x]}\n", `upstream "a": command:`},
		"neither":      {"handoff: {url: x}\nupstreams:\n  - {name: a}\n", `upstream "a": command:`},
		"bad_name":     {"handoff: {url: x}\nupstreams:\n  - {name: 'A B', command: [x]}\n", `upstream "A B": name:`},
		"twice":        {"handoff: {url: x}\nupstreams:\n  - {name: a, command: [x]}\n  - {name: a, command: [y]}\n", `upstream "a": name: used twice`},
		"bad_url":      {"handoff: {url: x}\nupstreams:\n  - {name: a, url: 'ftp://h'}\n", `upstream "a": url:`},
		"pass_guarded": {"handoff: {url: x}\nupstreams:\n  - name: a\n    command: [x]\n    pass: [create_task]\n    tools: [" + goodTool + "]\n", `tool "create_task": name:`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadConfig(writeConfig(t, c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestToolConfig_Classify(t *testing.T) {
	tc := ToolConfig{Name: "x", Type: "t", Key: KeyConfig{From: []string{"a"}}, Content: []string{"a"},
		Errors: []ErrorRule{{Match: "(?i)rate limit", Class: "rate_limited"}, {Match: "invalid", Class: "validation"}}}
	if p := tc.check(); p != nil {
		t.Fatal(p.msg)
	}
	for text, want := range map[string]string{"Rate limit hit": "rate_limited", "invalid due date": "validation", "socket hang up": "unknown"} {
		if got := tc.classify(text); got != want {
			t.Errorf("classify(%q) = %s, want %s", text, got, want)
		}
	}
}
