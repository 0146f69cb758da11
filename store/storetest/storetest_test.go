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
// makes: the same tables, indexes, functions, triggers and grants, the
// same migrations recorded, and the same tables analyzed — what the
// planner sees of an empty table depends on whether it has been.
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

	dump := func(u string) (ddl string, versions, analyzed []string) {
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
		versions = column(t, rows)
		// reltuples is -1 until a table is first analyzed (or vacuumed).
		// goose's own table is left out: the dump loads its rows before
		// it builds the table's primary key, and building an index counts
		// the rows.
		rows, err = db.Query("SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r' AND reltuples >= 0 AND relname <> 'goose_db_version' ORDER BY relname", schema)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		analyzed = column(t, rows)
		return strings.TrimSpace(strings.ReplaceAll(strings.Join(kept, ""), schema, "SCHEMA")), versions, analyzed
	}
	gotDDL, gotVersions, gotAnalyzed := dump(copied)
	wantDDL, wantVersions, wantAnalyzed := dump(migrated)
	if gotDDL != wantDDL {
		t.Errorf("the copy's DDL differs from a migrated schema's:\n--- copy\n%s\n--- migrated\n%s", gotDDL, wantDDL)
	}
	if len(wantVersions) < 2 || !slices.Equal(gotVersions, wantVersions) {
		t.Errorf("the copy records migrations %v, a migrated schema %v", gotVersions, wantVersions)
	}
	if len(wantAnalyzed) == 0 || !slices.Equal(gotAnalyzed, wantAnalyzed) {
		t.Errorf("the copy has analyzed %v, a migrated schema %v", gotAnalyzed, wantAnalyzed)
	}
}

// column reads the rows' one text column.
func column(t *testing.T, rows *sql.Rows) []string {
	t.Helper()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
