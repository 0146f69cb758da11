// Package storetest gives tests a fresh, migrated database: SQLite in a
// temporary file by default, or PostgreSQL — a new schema in the database
// that HANDOFF_TEST_POSTGRES names — when that variable is set.
//
// URL gives an empty database, which whoever opens it migrates with the
// real migrations. MigratedURL and New give a migrated one: they migrate a
// template once per test process and copy it for each test (the SQLite
// file's bytes, or the PostgreSQL schema's dump replayed under the test's
// schema name), since running every migration for every test is most of
// what a short store test costs.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // the admin connection that creates schemas
	"github.com/opshandoff/handoff/store"
)

// EnvPostgres names the PostgreSQL URL that switches the suite to PostgreSQL.
const EnvPostgres = "HANDOFF_TEST_POSTGRES"

// Postgres reports whether the suite runs on PostgreSQL.
func Postgres() bool { return os.Getenv(EnvPostgres) != "" }

// URL returns the URL of a fresh, empty database for the test, removed when
// the test ends.
func URL(t testing.TB) string {
	t.Helper()
	return newDatabase(t, nil)
}

// MigratedURL returns the URL of a fresh database for the test with every
// migration applied, removed when the test ends.
func MigratedURL(t testing.TB) string {
	t.Helper()
	tmpl, err := migratedTemplate()
	switch {
	case errors.Is(err, errNoDump):
		tmpl = nil // whoever opens the schema migrates it
	case err != nil:
		t.Fatalf("migrating the test database's template: %v", err)
	}
	return newDatabase(t, tmpl)
}

// New opens a fresh, migrated database for the test.
func New(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), MigratedURL(t))
	if err != nil {
		t.Fatalf("opening the test database: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newDatabase makes the test's database and returns its URL: empty when
// tmpl is nil, else a copy of the template — the SQLite file's bytes, or
// the PostgreSQL dump whose schema is named templateSchema.
func newDatabase(t testing.TB, tmpl []byte) string {
	t.Helper()
	base := os.Getenv(EnvPostgres)
	if base == "" {
		path := filepath.Join(t.TempDir(), "handoff.db")
		if tmpl != nil {
			if err := os.WriteFile(path, tmpl, 0o600); err != nil {
				t.Fatalf("copying the migrated template: %v", err)
			}
		}
		return "sqlite://" + path
	}
	schema := randomSchema("t_")
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	create := "CREATE SCHEMA " + schema
	if tmpl != nil {
		create = strings.ReplaceAll(string(tmpl), templateSchema, schema)
	}
	if _, err := admin.Exec(create); err != nil {
		admin.Close()
		t.Fatalf("creating test schema on %s: %v", EnvPostgres, err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	return schemaURL(t, base, schema)
}

func randomSchema(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// schemaURL is base with schema as its search_path.
func schemaURL(t testing.TB, base, schema string) string {
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// templateSchema is the template's schema name in its PostgreSQL dump,
// replaced by each test's schema name; random, so that no other text of
// the dump contains it.
var templateSchema = randomSchema("t_template_")

// errNoDump is pg_dump missing, or refusing the server (an older pg_dump
// than the server): then each test's schema is migrated by whoever opens it.
var errNoDump = errors.New("no pg_dump for this server")

var (
	templateOnce sync.Once
	templateData []byte
	templateErr  error
)

// migratedTemplate migrates a database once per test process and returns
// what newDatabase copies for each test.
func migratedTemplate() ([]byte, error) {
	templateOnce.Do(func() {
		if base := os.Getenv(EnvPostgres); base != "" {
			templateData, templateErr = postgresTemplate(base)
		} else {
			templateData, templateErr = sqliteTemplate()
		}
	})
	return templateData, templateErr
}

// sqliteTemplate migrates a SQLite file and returns its bytes. Closing the
// store checkpoints the write-ahead log into the file.
func sqliteTemplate() ([]byte, error) {
	dir, err := os.MkdirTemp("", "handoff-storetest")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "handoff.db")
	s, err := store.Open(context.Background(), "sqlite://"+path)
	if err != nil {
		return nil, err
	}
	if err := s.Close(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, errors.New("the template's write-ahead log outlived its store")
	}
	return os.ReadFile(path)
}

// postgresTemplate migrates a schema, dumps it — its tables, functions,
// triggers, grants and rows, the migrations' own record among them — and
// drops it. Replaying the dump under another name is a migrated schema.
func postgresTemplate(base string) ([]byte, error) {
	admin, err := sql.Open("pgx", base)
	if err != nil {
		return nil, err
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA " + templateSchema); err != nil {
		return nil, err
	}
	defer admin.Exec("DROP SCHEMA " + templateSchema + " CASCADE")
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	q.Set("search_path", templateSchema)
	u.RawQuery = q.Encode()
	s, err := store.Open(context.Background(), u.String())
	if err != nil {
		return nil, err
	}
	s.Close()
	// The tables the migrations (or the store after them) analyzed: the
	// copy analyzes the same ones, no more, so that the planner sees what
	// it sees in a migrated database. reltuples is -1 until a table is
	// first analyzed.
	var analyzed []string
	rows, err := admin.Query("SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r' AND reltuples >= 0 ORDER BY relname", templateSchema)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var table string
		if err := rows.Scan(&table); err != nil {
			rows.Close()
			return nil, err
		}
		analyzed = append(analyzed, templateSchema+"."+table)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	cmd := exec.Command("pg_dump", "--dbname="+base, "--schema="+templateSchema, "--inserts")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %v: %s", errNoDump, err, stderr.String())
	}
	// Drop psql's meta-commands (\restrict …): the dump is replayed as one
	// simple query, not by psql.
	var script strings.Builder
	for line := range strings.Lines(string(out)) {
		if !strings.HasPrefix(line, `\`) {
			script.WriteString(line)
		}
	}
	if len(analyzed) > 0 {
		fmt.Fprintf(&script, "\nANALYZE %s;\n", strings.Join(analyzed, ", "))
	}
	return []byte(script.String()), nil
}
