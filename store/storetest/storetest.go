// Package storetest gives tests a fresh, migrated database: SQLite in a
// temporary file by default, or PostgreSQL — a new schema in the database
// that HANDOFF_TEST_POSTGRES names — when that variable is set.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
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
	base := os.Getenv(EnvPostgres)
	if base == "" {
		return "sqlite://" + filepath.Join(t.TempDir(), "handoff.db")
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("%s: %v", EnvPostgres, err)
	}
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		t.Fatalf("creating test schema on %s: %v", EnvPostgres, err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", EnvPostgres, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// New opens and migrates a fresh database for the test.
func New(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), URL(t))
	if err != nil {
		t.Fatalf("opening the test database: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
