package store

import "testing"

// Tests play the attacker with direct SQL; these reach past the Store's API.

// ExecRaw runs one statement on the store's database.
func ExecRaw(t testing.TB, s *Store, sql string, args ...any) {
	t.Helper()
	if err := s.db.Exec(sql, args...).Error; err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// TryRaw runs one statement and returns its error.
func TryRaw(s *Store, sql string, args ...any) error { return s.db.Exec(sql, args...).Error }

// AllowTampering lifts the append-only guard as an attacker with the
// table owner's rights could: PostgreSQL's trigger is disabled (the test
// connects as the owner), SQLite's triggers are dropped.
func AllowTampering(t testing.TB, s *Store) {
	t.Helper()
	if s.dialect.isPostgres() {
		ExecRaw(t, s, "ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only")
		return
	}
	ExecRaw(t, s, "DROP TRIGGER audit_events_no_update")
	ExecRaw(t, s, "DROP TRIGGER audit_events_no_delete")
}
