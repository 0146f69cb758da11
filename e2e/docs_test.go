package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// The documents' runnable blocks are run here as a reader would paste them:
// every ```sh block of the files below, in order, in one shell whose
// variables carry from block to block, against a real server started the
// way the document says. Only the addresses change (the document's
// 127.0.0.1:8080 and :8090 become the ports the test took) and
// `go run ./cmd/handoff` becomes the binary built once for the tests.
// Commands that run for good (the server, the sandbox) are shown as
// indented blocks, which are not run: the test starts them itself.

// shellDocs are the files whose ```sh blocks are run, each by its own test.
var shellDocs = []string{"README.md", "docs/getting-started.md", "docs/guides/http.md", "docs/security.md"}

// mdBlock is one fenced block of a Markdown file: its language, its text
// and the heading it stands under.
type mdBlock struct {
	Lang, Text, Heading string
}

var fence = regexp.MustCompile("(?m)^```([a-z]*)\n")

// readBlocks reads the fenced blocks of a file under the repository root.
func readBlocks(t *testing.T, rel string) []mdBlock {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return mdBlocks(string(raw))
}

func mdBlocks(text string) []mdBlock {
	var out []mdBlock
	heading := ""
	for rest := text; ; {
		loc := fence.FindStringSubmatchIndex(rest)
		if loc == nil {
			return out
		}
		for line := range strings.SplitSeq(rest[:loc[0]], "\n") {
			if strings.HasPrefix(line, "#") {
				heading = strings.TrimSpace(strings.TrimLeft(line, "#"))
			}
		}
		body := rest[loc[1]:]
		end := strings.Index(body, "\n```")
		if end < 0 {
			return out
		}
		out = append(out, mdBlock{Lang: rest[loc[2]:loc[3]], Text: body[:end+1], Heading: heading})
		rest = body[end+4:]
	}
}

// docShell runs a document's blocks in bash in one folder; the variables
// the blocks assign carry over from one run to the next.
type docShell struct {
	t        *testing.T
	dir, bin string
	env      []string
	subst    *strings.Replacer
	names    []string // variables assigned so far
}

func newDocShell(t *testing.T, s *server, sandbox string) *docShell {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set and %s is missing", tool)
			}
			t.Skipf("%s is missing: the documents' commands need it", tool)
		}
	}
	addr := strings.TrimPrefix(s.URL, "http://")
	return &docShell{t: t, dir: t.TempDir(), bin: s.bin, env: s.env,
		subst: strings.NewReplacer("go run ./cmd/handoff", s.bin,
			"localhost:8080", addr, "127.0.0.1:8080", addr,
			"localhost:8090", sandbox, "127.0.0.1:8090", sandbox)}
}

var assigned = regexp.MustCompile(`(?m)(?:^|;\s*)([A-Z][A-Z0-9_]*)=`)

// run runs blocks, in order, and returns what they printed.
func (d *docShell) run(blocks ...mdBlock) string {
	d.t.Helper()
	var script strings.Builder
	script.WriteString("set -euo pipefail\n[ -f state ] && . ./state\n")
	for _, b := range blocks {
		text := d.subst.Replace(b.Text)
		for _, m := range assigned.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(d.names, m[1]) {
				d.names = append(d.names, m[1])
			}
		}
		script.WriteString(text)
	}
	if len(d.names) > 0 {
		fmt.Fprintf(&script, "declare -p %s > state\n", strings.Join(d.names, " "))
		for _, n := range d.names {
			fmt.Fprintf(&script, "printf '%%s=%%s\\n' %s \"${%s}\" >> state.plain\n", n, n)
		}
		script.WriteString("true\n")
	}
	_ = os.Remove(filepath.Join(d.dir, "state.plain"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script.String())
	cmd.Dir, cmd.Env = d.dir, d.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		d.t.Fatalf("the blocks failed: %v\n--- script\n%s\n--- stdout\n%s\n--- stderr\n%s", err, script.String(), out, stderr.String())
	}
	return string(out)
}

// value is a variable the blocks assigned.
func (d *docShell) value(name string) string {
	d.t.Helper()
	f, err := os.Open(filepath.Join(d.dir, "state.plain"))
	if err != nil {
		d.t.Fatal(err)
	}
	defer f.Close()
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if v, ok := strings.CutPrefix(sc.Text(), name+"="); ok {
			return v
		}
	}
	d.t.Fatalf("the blocks assigned no %s", name)
	return ""
}

// startSandbox runs `handoff sandbox`, the simulated provider, and returns
// its address.
func startSandbox(t *testing.T, bin string) string {
	t.Helper()
	addr := freeAddr(t, "127.0.0.1")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "sandbox", "--addr", addr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatal("the sandbox did not start")
		}
	}
}

// docServer is a server configured as a reader's first run is: the bundled
// example cards, no OIDC (so the desk offers the development sign-in).
func docServer(t *testing.T) *server {
	t.Helper()
	return startServer(t, "HANDOFF_CARDS=")
}

func wantAll(t *testing.T, what, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("%s printed no %q:\n%s", what, w, out)
		}
	}
}

// TestDocs_GettingStarted follows docs/getting-started.md from a fresh
// server to a decided desk item: its commands up to the desk, then the
// decision a person takes there — signed in with the development sign-in,
// the item's Confirm executed form posted with the reference the lookup
// found — then its last commands, which must show the charge completed
// and a retry replayed.
func TestDocs_GettingStarted(t *testing.T) {
	blocks := readBlocks(t, "docs/getting-started.md")
	var before, after []mdBlock
	desk := false
	for _, b := range blocks {
		if b.Lang != "sh" {
			t.Fatalf("a %q block in the tutorial: every block is a command to run", b.Lang)
		}
		if strings.Contains(b.Heading, "Decide it on the desk") {
			desk = true
		}
		if desk {
			after = append(after, b)
		} else {
			before = append(before, b)
		}
	}
	if len(before) < 4 || len(after) < 3 {
		t.Fatalf("the tutorial's blocks: %d before the desk, %d from it", len(before), len(after))
	}
	s := docServer(t)
	sh := newDocShell(t, s, startSandbox(t, s.bin))

	out := sh.run(before...)
	wantAll(t, "the steps before the desk", out, `"action_pending"`, "no answer: timed out", `"unknown_outcome"`)
	id := sh.value("ID")

	// The person's part: the lookup block, then the decision on the desk.
	looked := sh.run(after[0])
	m := regexp.MustCompile(`"ref": "(sbx_\d+)"`).FindStringSubmatch(looked)
	if m == nil || !strings.Contains(looked, `"found": true`) {
		t.Fatalf("the provider's lookup found nothing:\n%s", looked)
	}
	decideOnDesk(t, s, id, m[1], "found the charge in the provider's records")

	out = sh.run(after[1:]...)
	wantAll(t, "the steps after the desk", out, `"completed"`, m[1], "confirm_executed", "Idempotent-Replayed: true")
}

// decideOnDesk signs in with the development sign-in as an operator and
// posts the operation page's Confirm executed form, as the tutorial's
// reader does in a browser.
func decideOnDesk(t *testing.T, s *server, id, ref, reason string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	post := func(path string, form url.Values) string {
		t.Helper()
		req, _ := http.NewRequest("POST", s.URL+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", s.URL)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("POST %s: %d\n%s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	post("/auth/login", url.Values{"name": {"Tess Tutorial"}, "role": {"operator"}, "next": {"/desk/queue"}})
	resp, err := c.Get(s.URL + "/desk/operations/" + id)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(page), `value="confirm_executed"`) {
		t.Fatalf("the item's page offers no Confirm executed (%d):\n%.2000s", resp.StatusCode, page)
	}
	v := regexp.MustCompile(`name="expected_version" value="(\d+)"`).FindSubmatch(page)
	if v == nil {
		t.Fatal("the item's page carries no version")
	}
	post("/desk/operations/"+id+"/resolve", url.Values{"action": {"confirm_executed"}, "result_ref": {ref},
		"reason": {reason}, "expected_version": {string(v[1])}})
}

// TestDocs_HTTPGuide runs the lifecycle with curl, block by block.
func TestDocs_HTTPGuide(t *testing.T) {
	s := docServer(t)
	sh := newDocShell(t, s, startSandbox(t, s.bin))
	var blocks []mdBlock
	for _, b := range readBlocks(t, "docs/guides/http.md") {
		if b.Lang == "sh" {
			blocks = append(blocks, b)
		}
	}
	out := sh.run(blocks...)
	wantAll(t, "docs/guides/http.md", out, `"completed"`, "Idempotent-Replayed: true", `"action_pending"`,
		`"unknown_outcome"`, `"key": "evt_43:welcome"`)
}

// TestDocs_SecurityBlock: the pseudonym recipe runs as shown.
func TestDocs_SecurityBlock(t *testing.T) {
	n := 0
	for _, b := range readBlocks(t, "docs/security.md") {
		if b.Lang != "sh" {
			continue
		}
		out, err := exec.Command("bash", "-euo", "pipefail", "-c", b.Text).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) != 16 {
			t.Fatalf("%v: %q", err, out)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d sh blocks in docs/security.md, want 1", n)
	}
}

// TestDocs_EveryShellBlockIsRun: a ```sh block is a promise that the
// command runs; only the files above hold any.
func TestDocs_EveryShellBlockIsRun(t *testing.T) {
	err := filepath.WalkDir("../docs", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		rel := strings.TrimPrefix(filepath.ToSlash(path), "../")
		// docs/design/ is the lab notebook: its commands ran at the commits it names.
		if slices.Contains(shellDocs, rel) || strings.HasPrefix(rel, "docs/design/") {
			return nil
		}
		for _, b := range readBlocks(t, rel) {
			if b.Lang == "sh" || b.Lang == "bash" || b.Lang == "shell" {
				t.Errorf("%s has a %s block under %q that no test runs: run it, or show it indented", rel, b.Lang, b.Heading)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readmeGoMain wraps the README's Go block, which stands in a function that
// has a ctx, into a program.
const readmeGoMain = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/opshandoff/handoff/client"
)

func main() {
	ctx := context.Background()
%s}
`

// TestDocs_README runs the README's blocks against one server and the
// sandbox: the curl lifecycle, then the Python, TypeScript and Go examples
// twice each — the first run calls the provider, the second gets the
// stored result back. Each block is at most 15 lines.
func TestDocs_README(t *testing.T) {
	blocks := readBlocks(t, "README.md")
	byLang := map[string][]mdBlock{}
	for _, b := range blocks {
		if n := strings.Count(b.Text, "\n"); n > 15 {
			t.Errorf("the README's %s block under %q is %d lines, more than 15", b.Lang, b.Heading, n)
		}
		byLang[b.Lang] = append(byLang[b.Lang], b)
	}
	for _, lang := range []string{"sh", "python", "js", "go"} {
		if len(byLang[lang]) != 1 {
			t.Fatalf("the README has %d %s blocks, want 1", len(byLang[lang]), lang)
		}
	}
	if len(blocks) != 4 {
		t.Fatalf("the README has %d blocks; each must be run here", len(blocks))
	}
	s := docServer(t)
	sandbox := startSandbox(t, s.bin)
	sh := newDocShell(t, s, sandbox)
	wantAll(t, "the README's curl block", sh.run(byLang["sh"]...), `"completed"`)
	if st := str(s.do(t, "GET", "/v1/operations/"+sh.value("ID"), nil).Body, "result", "ref"); st != sh.value("REF") || !strings.HasPrefix(st, "sbx_") {
		t.Errorf("the curl block's operation has result ref %q, the provider answered %q", st, sh.value("REF"))
	}

	dir := t.TempDir()
	env := append(os.Environ(), "HANDOFF_URL="+s.URL, "HANDOFF_TOKEN="+s.Token, "SANDBOX_URL=http://"+sandbox)
	twice := func(what string, cmd func() *exec.Cmd, first, again string) []string {
		t.Helper()
		var outs []string
		for range 2 {
			c := cmd()
			c.Env = slices.Concat(env, c.Env)
			out, err := c.CombinedOutput()
			if err != nil {
				t.Fatalf("the README's %s example: %v\n%s", what, err, out)
			}
			outs = append(outs, strings.TrimSpace(string(out)))
		}
		if !regexp.MustCompile(first).MatchString(outs[0]) || !regexp.MustCompile(again).MatchString(outs[1]) {
			t.Errorf("the README's %s example printed %q, then %q", what, outs[0], outs[1])
		}
		return outs
	}
	need := func(tool string) bool {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("CI is set and %s is missing", tool)
			}
			t.Logf("%s is missing: its README example is not run", tool)
			return false
		}
		return true
	}
	repo, _ := filepath.Abs("..")

	if need("python3") {
		py := filepath.Join(dir, "readme.py")
		if err := os.WriteFile(py, []byte(byLang["python"][0].Text), 0o600); err != nil {
			t.Fatal(err)
		}
		twice("Python", func() *exec.Cmd {
			c := exec.Command("python3", py)
			c.Env = []string{"PYTHONPATH=" + filepath.Join(repo, "sdk/python")}
			return c
		}, `^sbx_\d+ \(first run\)$`, `^sbx_\d+ \(replayed: the provider was not called\)$`)
	}

	if need("node") {
		// As after npm install: the package in node_modules.
		mod := filepath.Join(dir, "node_modules", "@opshandoff")
		if err := os.MkdirAll(mod, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(repo, "sdk/typescript"), filepath.Join(mod, "handoff")); err != nil {
			t.Fatal(err)
		}
		js := filepath.Join(dir, "readme.mjs")
		if err := os.WriteFile(js, []byte(byLang["js"][0].Text), 0o600); err != nil {
			t.Fatal(err)
		}
		twice("TypeScript", func() *exec.Cmd { return exec.Command("node", js) },
			`^sbx_\d+ \(first run\)$`, `^sbx_\d+ \(replayed: the provider was not called\)$`)
	}

	// The Go block, in a main of its own inside this module.
	prog, err := os.MkdirTemp("testdata", "readme-go-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(prog) })
	body := "\t" + strings.ReplaceAll(strings.TrimRight(byLang["go"][0].Text, "\n"), "\n", "\n\t") + "\n"
	if err := os.WriteFile(filepath.Join(prog, "main.go"), fmt.Appendf(nil, readmeGoMain, body), 0o600); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "readme-go")
	if out, err := exec.Command("go", "build", "-o", exe, "./"+filepath.ToSlash(prog)).CombinedOutput(); err != nil {
		t.Fatalf("the README's Go block does not build: %v\n%s", err, out)
	}
	if outs := twice("Go", func() *exec.Cmd { return exec.Command(exe) }, `^completed sbx_\d+ <nil>$`, `^completed sbx_\d+ <nil>$`); outs[0] != outs[1] {
		t.Errorf("the README's Go example settled %q, then answered %q: the replay should give the stored result", outs[0], outs[1])
	}
}
