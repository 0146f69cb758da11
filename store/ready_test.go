package store_test

import (
	"context"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// Ping is /readyz: it fails while a migration is pending and while the
// database cannot be reached, and passes again once migrated.
func TestPing_PendingMigrationAndUnreachable(t *testing.T) {
	ctx := context.Background()
	url := storetest.URL(t)
	s, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("a migrated database is not ready: %v", err)
	}
	store.MigrateDownOne(t, s)
	if err := s.Ping(ctx); domain.ErrorCode(err) != domain.EUnavailable {
		t.Fatalf("with a migration pending, Ping = %v, want unavailable", err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("after migrating again: %v", err)
	}
	s.Close()
	if err := s.Ping(ctx); domain.ErrorCode(err) != domain.EUnavailable {
		t.Fatalf("with the database closed, Ping = %v, want unavailable", err)
	}
}
