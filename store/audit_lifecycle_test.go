package store

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/migrations"
)

// A partial index serves only the queries that spell its predicate: the
// lifecycle's condition the store writes must be the one the last
// migration that made the index of decisions wrote, in both dialects, and
// list exactly the actions the store leaves to it.
func TestLifecycleActions_areTheIndexPredicate(t *testing.T) {
	for _, dialect := range []string{"postgres", "sqlite"} {
		last, up := lastIndexMigration(t, dialect, "audit_events_decisions")
		if !strings.Contains(up, "WHERE "+notLifecycle+";") {
			t.Errorf("%s %s: the index of decisions is not over %q", dialect, last, notLifecycle)
		}
	}
	var quoted []string
	for _, a := range lifecycleActions {
		quoted = append(quoted, "'"+a+"'")
	}
	if want := "action NOT IN (" + strings.Join(quoted, ", ") + ")"; notLifecycle != want {
		t.Errorf("notLifecycle is %s, lifecycleActions make %s", notLifecycle, want)
	}
}

// The twin check reads open_operations, which holds the operations in the
// open states: the trigger of the last migration that writes its rows
// must keep the states the domain names, in both dialects.
func TestTwinStates_areTheOpenOperations(t *testing.T) {
	for _, dialect := range []string{"postgres", "sqlite"} {
		last, up := lastMigrationWith(t, dialect, "INSERT INTO open_operations ")
		if !strings.Contains(up, "state IN "+twinStatesSQL) {
			t.Errorf("%s %s: open_operations does not hold the states %s", dialect, last, twinStatesSQL)
		}
	}
}

// lastIndexMigration is the name and the Up part of the dialect's last
// migration that creates the index: where its predicate now stands.
func lastIndexMigration(t *testing.T, dialect, index string) (name, up string) {
	t.Helper()
	return lastMigrationWith(t, dialect, "CREATE INDEX "+index+" ")
}

// lastMigrationWith is the name and the Up part of the dialect's last
// migration whose Up part holds text.
func lastMigrationWith(t *testing.T, dialect, text string) (name, up string) {
	t.Helper()
	fsys, err := migrations.For(dialect)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := fs.Glob(fsys, "*.sql")
	slices.Sort(names)
	for _, n := range names {
		b, _ := fs.ReadFile(fsys, n)
		s, _, _ := strings.Cut(string(b), "-- +goose Down")
		if strings.Contains(s, text) {
			name, up = n, s
		}
	}
	return name, up
}
