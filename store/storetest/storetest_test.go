package storetest

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/store"
)

// A copy of the migrated template is what migrating an empty database
// makes: the same tables, indexes, functions, triggers and grants, and the
// same migrations recorded.
func TestNew_copyIsTheMigratedSchema(t *testing.T) {
	if !Postgres() {
		t.Skip("the SQLite copy is the template file's bytes; the PostgreSQL copy is replayed DDL, checked here")
	}
	tmpl, err := migratedTemplate()
	if errors.Is(err, errNoDump) {
		t.Skipf("each test's schema is migrated by whoever opens it: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	copied := newDatabase(t, tmpl)
	migrated := URL(t)
	s, err := store.Open(context.Background(), migrated)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	dump := func(u string) (ddl string, versions []int64) {
		t.Helper()
		p, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		schema := p.Query().Get("search_path")
		out, err := exec.Command("pg_dump", "--dbname="+os.Getenv(EnvPostgres), "--schema="+schema, "--schema-only").Output()
		if err != nil {
			t.Fatalf("pg_dump: %v", err)
		}
		var kept []string
		for line := range strings.Lines(string(out)) {
			switch {
			case strings.HasPrefix(line, `\`): // \restrict carries a random key
			case strings.HasPrefix(line, "CREATE TRIGGER"):
				// A replayed trigger's condition deparses a chain of ORs
				// with fewer parentheses; the condition is the same.
				kept = append(kept, strings.NewReplacer("(", "", ")", "").Replace(line))
			default:
				kept = append(kept, line)
			}
		}
		db, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		rows, err := db.Query("SELECT version_id FROM goose_db_version WHERE is_applied ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				t.Fatal(err)
			}
			versions = append(versions, v)
		}
		return strings.TrimSpace(strings.ReplaceAll(strings.Join(kept, ""), schema, "SCHEMA")), versions
	}
	gotDDL, gotVersions := dump(copied)
	wantDDL, wantVersions := dump(migrated)
	if gotDDL != wantDDL {
		t.Errorf("the copy's DDL differs from a migrated schema's:\n--- copy\n%s\n--- migrated\n%s", gotDDL, wantDDL)
	}
	if len(wantVersions) < 2 || !slices.Equal(gotVersions, wantVersions) {
		t.Errorf("the copy records migrations %v, a migrated schema %v", gotVersions, wantVersions)
	}
}
