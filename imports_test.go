// Package handoff holds the tests that keep the house's rules: which folder
// may import which. The module's code lives in the folders below it.
package handoff

import (
	"bufio"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/opshandoff/handoff/"

// mayImport is the dependency table of the house: for each folder, the
// folders of ours its code may import (a folder may always import itself and
// its own sub-folders). Arrows point toward domain; api and web never import
// each other. api and web also call the audit trail's use cases, which live
// in audit/ beside the domain rather than inside it. The table in
// docs/reference/layout.md says the same (TestImportRules_layoutAgrees).
var mayImport = map[string][]string{
	"domain":     {},
	"store":      {"domain", "migrations"},
	"audit":      {"domain"},
	"migrations": {},
	"reconcile":  {"domain"},
	"auth":       {"domain"},
	"cards":      {"domain"},
	"api":        {"domain", "auth", "audit"},
	"web":        {"domain", "auth", "audit", "views", "static"},
	"views":      {"domain", "static"},
	"static":     {},
	"notify":     {"domain"},
	"lookup":     {"domain", "notify"},
	"execute":    {"domain", "notify", "lookup"},
	"sandbox":    {},
	"drill":      {"client", "sandbox"},
	"client":     {},
	"mcp":        {"client", "execute"},
	"sdk":        {"sandbox", "internal"},
	"chaos":      {},
	"internal":   {},
}

// mayImportAnything names the folders that wire the others together or test
// them from outside: the binaries, the end-to-end tests, the documentation's
// and the deployment's tests. Every other folder with Go code needs a row in
// mayImport (TestImportRules_everyFolderHasARow).
var mayImportAnything = []string{"cmd", "e2e", "docs", "deploy", "bench", "scripts"}

// onlyIn names the outside modules that belong to one room each: the
// database layer to store, the HTTP framework to api and web, templates to
// views and web.
var onlyIn = map[string][]string{
	"gorm.io/":                 {"store"},
	"github.com/gin-gonic/gin": {"api", "web"},
	"github.com/a-h/templ":     {"views", "web"},
}

// notIn names the standard packages a room may not import: the domain
// decides and does no I/O of its own; SQL is store's, HTTP api's and web's.
var notIn = map[string][]string{
	"domain": {"database/sql", "net", "net/http"},
}

// excused lists the imports that break a rule above in one file only, and
// why. Nothing else in the room may follow them.
var excused = map[string]string{
	`domain/error_status.go imports "net/http"`: "the HTTP status of each error code, named by net/http's constants",
}

// testMayImport is what the tests of a folder may import of ours beyond what
// its code may, and only from its external test package (folder_test): the
// folder's code still cannot reach it. domain's use cases are tested over
// a real database, on SQLite and PostgreSQL as the suite runs, never a mock
// of one, so domain_test may build a store with store/storetest (which
// scripts/test's PostgreSQL half selects by) — and nothing else of ours.
var testMayImport = map[string][]string{
	"domain": {"store/storetest"},
}

// TestImportRules fails on any import of the production code that the
// table above forbids. Test files aside — a test may build what it needs —
// but for the folders in testMayImport, whose tests keep their table too.
func TestImportRules(t *testing.T) {
	for _, v := range importViolations(t, ".") {
		t.Error(v)
	}
}

// importViolations walks the module's tree at root and returns one line per
// forbidden import: the file (relative to root), the import and why.
func importViolations(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", "peers", ".git":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		room := strings.Split(rel, "/")[0]
		_, testsRuled := testMayImport[room]
		isTest := strings.HasSuffix(path, "_test.go")
		if isTest && !testsRuled {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			line := rel + " imports " + strconv.Quote(imp)
			if _, ok := excused[line]; ok {
				continue
			}
			why := forbidden(room, imp)
			if isTest {
				why = forbiddenInTest(room, f.Name.Name, imp)
			}
			if why != "" {
				found = append(found, line+": "+why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// forbidden says why room may not import imp, or "" when it may.
func forbidden(room, imp string) string {
	if why := outsideItsRoom(room, imp); why != "" {
		return why
	}
	if slices.Contains(notIn[room], imp) {
		return room + "/ may not import " + imp
	}
	ours, ok := strings.CutPrefix(imp, module)
	if !ok {
		return ""
	}
	allowed, listed := mayImport[room]
	if !listed {
		return ""
	}
	target := strings.Split(ours, "/")[0]
	if target == room || slices.Contains(allowed, target) {
		return ""
	}
	if len(allowed) == 0 {
		return room + "/ imports nothing of ours"
	}
	return room + "/ may import only " + strings.Join(allowed, ", ")
}

// forbiddenInTest says why a test file of room in package pkg may not import
// imp, or "" when it may: what room's code may, and testMayImport's
// entries from the external test package only.
func forbiddenInTest(room, pkg, imp string) string {
	if ours, ok := strings.CutPrefix(imp, module); ok && slices.Contains(testMayImport[room], ours) {
		if pkg != room+"_test" {
			return "only " + room + "_test, the external test package, may import " + ours
		}
		return ""
	}
	if _, ours := strings.CutPrefix(imp, module); !ours {
		// A test may use the standard library as it needs (an HTTP status
		// table's test, say); outside modules keep their rooms.
		return outsideItsRoom(room, imp)
	}
	return forbidden(room, imp)
}

// outsideItsRoom says why room may not import imp, an outside module that
// onlyIn gives to other rooms, or "" when it may.
func outsideItsRoom(room, imp string) string {
	for prefix, rooms := range onlyIn {
		if strings.HasPrefix(imp, prefix) && !slices.Contains(rooms, room) {
			return "only " + strings.Join(rooms, " and ") + " may import " + prefix
		}
	}
	return ""
}

// TestImportRules_catchesAForbiddenImport plants the rule's own examples so a
// table that allowed everything could not pass.
func TestImportRules_catchesAForbiddenImport(t *testing.T) {
	for _, c := range []struct{ room, imp string }{
		{"domain", module + "store"},
		{"domain", "gorm.io/gorm"},
		{"domain", "net/http"},
		{"domain", "database/sql"},
		{"api", module + "web"},
		{"web", module + "api"},
		{"reconcile", "github.com/gin-gonic/gin"},
		{"store", module + "api"},
		{"client", module + "domain"},
	} {
		if forbidden(c.room, c.imp) == "" {
			t.Errorf("%s/ importing %s was allowed", c.room, c.imp)
		}
	}
	for _, c := range []struct{ pkg, imp string }{
		{"domain", module + "store/storetest"}, // the internal test package
		{"domain_test", module + "store"},
		{"domain_test", module + "api"},
		{"domain_test", "gorm.io/gorm"},
	} {
		if forbiddenInTest("domain", c.pkg, c.imp) == "" {
			t.Errorf("a domain test in package %s importing %s was allowed", c.pkg, c.imp)
		}
	}
	if why := forbiddenInTest("domain", "domain_test", module+"store/storetest"); why != "" {
		t.Errorf("domain_test importing store/storetest was refused: %s", why)
	}
	for _, c := range []struct{ room, imp string }{
		{"store", module + "domain"},
		{"web", module + "views/pages"},
		{"cmd", module + "store"},
		{"domain", "encoding/json"},
		{"api", "net/http"},
	} {
		if why := forbidden(c.room, c.imp); why != "" {
			t.Errorf("%s/ importing %s was refused: %s", c.room, c.imp, why)
		}
	}
}

// TestImportRules_failsOnAPlantedFile runs the walk over a small tree whose
// domain imports the store and net/http, whose domain test imports the store
// (store/storetest alone is allowed there), and whose web imports api: each
// forbidden import is reported with its file, the import and the rule, and
// the excused import stays excused in its own file only.
func TestImportRules_failsOnAPlantedFile(t *testing.T) {
	root := t.TempDir()
	plant := func(path, src string) {
		t.Helper()
		full := filepath.Join(root, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plant("domain/ok.go", "package domain\n\nimport _ \"encoding/json\"\n")
	plant("domain/error_status.go", "package domain\n\nimport _ \"net/http\"\n")
	plant("domain/planted.go", "package domain\n\nimport (\n\t_ \"github.com/opshandoff/handoff/store\"\n\t_ \"net/http\"\n)\n")
	plant("domain/planted_test.go", "package domain_test\n\nimport (\n\t_ \"github.com/opshandoff/handoff/store\"\n\t_ \"github.com/opshandoff/handoff/store/storetest\"\n\t_ \"net/http\"\n)\n")
	plant("web/planted.go", "package web\n\nimport _ \"github.com/opshandoff/handoff/api\"\n")
	plant("api/ok.go", "package api\n\nimport _ \"github.com/opshandoff/handoff/domain\"\n")
	plant("cmd/handoff/ok.go", "package main\n\nimport _ \"github.com/opshandoff/handoff/store\"\n")

	got := importViolations(t, root)
	want := []string{
		`domain/planted.go imports "github.com/opshandoff/handoff/store": domain/ imports nothing of ours`,
		`domain/planted.go imports "net/http": domain/ may not import net/http`,
		`domain/planted_test.go imports "github.com/opshandoff/handoff/store": domain/ imports nothing of ours`,
		`web/planted.go imports "github.com/opshandoff/handoff/api": web/ may import only domain, auth, audit, views, static`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestImportRules_everyFolderHasARow keeps a new folder from escaping the
// rules: each top-level folder with Go code has a row in mayImport or is
// named in mayImportAnything, and no row names a folder that is gone.
func TestImportRules_everyFolderHasARow(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if !holdsGo(t, e.Name()) {
			continue
		}
		present[e.Name()] = true
		_, ruled := mayImport[e.Name()]
		if !ruled && !slices.Contains(mayImportAnything, e.Name()) {
			t.Errorf("%s/ holds Go code but has no row in mayImport", e.Name())
		}
	}
	for room := range mayImport {
		if !present[room] {
			t.Errorf("mayImport has a row for %s/, which holds no Go code", room)
		}
	}
}

// holdsGo reports whether dir or a folder below it holds a .go file of this
// module (the peers' own modules and node_modules aside).
func holdsGo(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || found {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "peers") {
			return filepath.SkipDir
		}
		found = !d.IsDir() && strings.HasSuffix(path, ".go")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestImportRules_layoutAgrees reads the table "Who may import whom" in
// docs/reference/layout.md and checks it row by row against mayImport,
// notIn and mayImportAnything, so the documentation and the test state one
// rule.
func TestImportRules_layoutAgrees(t *testing.T) {
	f, err := os.Open("docs/reference/layout.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	folder := regexp.MustCompile("`([a-z0-9/]+)/`")
	code := regexp.MustCompile("`([a-z0-9/]+)`")
	doc := map[string][]string{}
	docNot := map[string][]string{}
	var docAnything []string
	inTable := false
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		line := lines.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			inTable = line == "## Who may import whom"
			continue
		case !inTable || !strings.HasPrefix(line, "| `"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 {
			t.Fatalf("layout.md: a row of three cells expected: %s", line)
		}
		m := folder.FindStringSubmatch(cells[0])
		if m == nil {
			t.Fatalf("layout.md: a folder in backquotes expected first: %s", line)
		}
		room := m[1]
		if cells[1] == "anything" {
			docAnything = append(docAnything, room)
			continue
		}
		doc[room] = []string{}
		for _, m := range folder.FindAllStringSubmatch(cells[1], -1) {
			doc[room] = append(doc[room], m[1])
		}
		for _, m := range code.FindAllStringSubmatch(cells[2], -1) {
			docNot[room] = append(docNot[room], m[1])
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	if len(doc) == 0 {
		t.Fatal(`layout.md has no table under "## Who may import whom"`)
	}
	for _, room := range slices.Sorted(maps.Keys(mayImport)) {
		want, ok := doc[room]
		if !ok {
			t.Errorf("layout.md has no row for %s/", room)
			continue
		}
		if !slices.Equal(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(mayImport[room]))) {
			t.Errorf("%s/: layout.md allows %v, mayImport %v", room, want, mayImport[room])
		}
		if !slices.Equal(slices.Sorted(slices.Values(docNot[room])), slices.Sorted(slices.Values(notIn[room]))) {
			t.Errorf("%s/: layout.md forbids %v, notIn %v", room, docNot[room], notIn[room])
		}
	}
	for room := range doc {
		if _, ok := mayImport[room]; !ok {
			t.Errorf("layout.md has a row for %s/, mayImport none", room)
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(docAnything)), slices.Sorted(slices.Values(mayImportAnything))) {
		t.Errorf("layout.md lets %v import anything, mayImportAnything %v", docAnything, mayImportAnything)
	}
}
