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

// TestImportRules fails on any import of the production code (test files
// aside: a test may build what it needs) that the table above forbids.
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
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		room := strings.Split(filepath.ToSlash(path), "/")[0]
		for _, spec := range f.Imports {
			imp, _ := strconv.Unquote(spec.Path.Value)
			if why := forbidden(room, imp); why != "" {
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
