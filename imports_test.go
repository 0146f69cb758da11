// Package handoff holds the tests that keep the house's rules: which folder
// may import which. The module's code lives in the folders below it.
package handoff

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
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
// in audit/ beside the domain rather than inside it. A folder that is not
// listed (cmd/, e2e/, the tests' helpers) may import anything.
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
	"sdk":        {"sandbox"},
	"chaos":      {},
}

// onlyIn names the outside modules that belong to one room each: the
// database layer to store, the HTTP framework to api and web, templates to
// views and web.
var onlyIn = map[string][]string{
	"gorm.io/":                 {"store"},
	"github.com/gin-gonic/gin": {"api", "web"},
	"github.com/a-h/templ":     {"views", "web"},
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
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
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
		room := strings.Split(filepath.ToSlash(path), "/")[0]
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
			why := forbidden(room, imp)
			if isTest {
				why = forbiddenInTest(room, f.Name.Name, imp)
			}
			if why != "" {
				t.Errorf("%s imports %q: %s", path, imp, why)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// forbidden says why room may not import imp, or "" when it may.
func forbidden(room, imp string) string {
	for prefix, rooms := range onlyIn {
		if strings.HasPrefix(imp, prefix) && !slices.Contains(rooms, room) {
			return "only " + strings.Join(rooms, " and ") + " may import " + prefix
		}
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
	return forbidden(room, imp)
}

// TestImportRules_catchesAForbiddenImport plants the rule's own examples so a
// table that allowed everything could not pass.
func TestImportRules_catchesAForbiddenImport(t *testing.T) {
	for _, c := range []struct{ room, imp string }{
		{"domain", module + "store"},
		{"domain", "gorm.io/gorm"},
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
	} {
		if why := forbidden(c.room, c.imp); why != "" {
			t.Errorf("%s/ importing %s was refused: %s", c.room, c.imp, why)
		}
	}
}
