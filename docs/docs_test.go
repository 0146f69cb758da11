package docs

import (
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/domain"
)

// openAPIRoutes is every "METHOD /path" the server's OpenAPI document
// describes.
func openAPIRoutes(t *testing.T) []string {
	t.Helper()
	e, err := api.New(api.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest("GET", "/v1/openapi.json", nil))
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatalf("GET /v1/openapi.json: %v", err)
	}
	var out []string
	for path, item := range doc.Paths {
		for method := range item {
			if m := strings.ToUpper(method); m != "PARAMETERS" {
				out = append(out, m+" "+path)
			}
		}
	}
	slices.Sort(out)
	return out
}

// routeRef is a route as api.md writes it: `GET /v1/operations/{id}`, with
// any query string or trailing prose left off.
var routeRef = regexp.MustCompile("`(GET|POST|PUT|PATCH|DELETE) (/[^`?\\s]*)")

// TestAPIDocument_namesEveryServedRoute: api.md and the OpenAPI document
// describe the same routes, so a route added to one is added to the other.
func TestAPIDocument_namesEveryServedRoute(t *testing.T) {
	b, err := os.ReadFile("api.md")
	if err != nil {
		t.Fatal(err)
	}
	params := regexp.MustCompile(`\{[a-z_]+\}`)
	norm := func(r string) string { return params.ReplaceAllString(r, "{}") }
	named := map[string]bool{}
	for _, m := range routeRef.FindAllStringSubmatch(string(b), -1) {
		named[norm(m[1]+" "+m[2])] = true
	}
	served := map[string]bool{}
	for _, r := range openAPIRoutes(t) {
		served[norm(r)] = true
		if !named[norm(r)] {
			t.Errorf("the OpenAPI document describes %s; api.md does not name it", r)
		}
	}
	for r := range named {
		if !served[r] {
			t.Errorf("api.md names %s; the server does not describe it", r)
		}
	}
	if len(served) < 25 {
		t.Fatalf("only %d routes described", len(served))
	}
}

// TestAPIDocument_listsEveryErrorCode: the errors table has a row for each
// code a client can receive (an internal error is the one it need not name).
func TestAPIDocument_listsEveryErrorCode(t *testing.T) {
	b, err := os.ReadFile("api.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range domain.Codes() {
		if c == domain.EInternal || c == domain.EConflict {
			continue // never answered as such: internal is "internal error", conflict is retried inside the Ledger
		}
		if !strings.Contains(string(b), "`"+string(c)+"`") {
			t.Errorf("api.md's errors table has no row for %s", c)
		}
	}
}

// mdLink is a Markdown link or image target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestMarkdown_noLinkLeavesTheRepository: every relative link in the
// repository's Markdown resolves to a file inside it, and nothing names a
// folder beside the repository.
func TestMarkdown_noLinkLeavesTheRepository(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		checked++
		if strings.Contains(string(b), "../shared") {
			t.Errorf("%s names ../shared, a folder outside the repository", rel)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			abs := filepath.Clean(filepath.Join(filepath.Dir(path), target))
			if !strings.HasPrefix(abs, root+string(filepath.Separator)) {
				t.Errorf("%s links %s, outside the repository", rel, m[1])
				continue
			}
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s links %s, which does not exist", rel, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no Markdown found")
	}
}

// openAPISchemaProperties are the properties of a component schema of the
// server's OpenAPI document.
func openAPISchemaProperties(t *testing.T, name string) []string {
	t.Helper()
	e, err := api.New(api.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest("GET", "/v1/openapi.json", nil))
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatalf("GET /v1/openapi.json: %v", err)
	}
	var out []string
	for p := range doc.Components.Schemas[name].Properties {
		out = append(out, p)
	}
	if len(out) == 0 {
		t.Fatalf("the OpenAPI document has no schema %s", name)
	}
	slices.Sort(out)
	return out
}

// TestAPIDocument_operationTypesShowEveryCardLine: every top-level line of
// the card api.md shows is a member of the OperationType answer (notify_url
// is shown within notify, without its path), and every member of the
// OperationType and Attempt answers is named in api.md.
func TestAPIDocument_operationTypesShowEveryCardLine(t *testing.T) {
	b, err := os.ReadFile("api.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, section, _ := strings.Cut(doc, "## Operation types")
	_, block, _ := strings.Cut(section, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	props := openAPISchemaProperties(t, "OperationType")
	line := regexp.MustCompile(`(?m)^[ -] ([a-z_]+):`)
	lines := line.FindAllStringSubmatch(block, -1)
	if len(lines) < 25 {
		t.Fatalf("api.md's card shows %d lines", len(lines))
	}
	for _, m := range lines {
		name := m[1]
		if name == "notify_url" {
			name = "notify"
		}
		if !slices.Contains(props, name) {
			t.Errorf("the card line %s is not shown by GET /v1/operation-types", m[1])
		}
	}
	for _, schema := range []string{"OperationType", "Attempt"} {
		for _, p := range openAPISchemaProperties(t, schema) {
			if !strings.Contains(doc, p) {
				t.Errorf("%s.%s is not named in api.md", schema, p)
			}
		}
	}
}
