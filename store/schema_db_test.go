package store_test

import (
	"slices"
	"testing"

	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestSchema_tablesMatchDatabase: schema.go names every column the
// migrated database's hot tables have, and no other — a migration that
// adds a column fails here until its line in schema.go is written.
func TestSchema_tablesMatchDatabase(t *testing.T) {
	s := storetest.New(t)
	for table, want := range store.SchemaColumns() {
		got, err := store.DBColumns(s, table)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got, want) {
			t.Errorf("%s: the database has %v, schema.go %v", table, got, want)
		}
	}
}
