package store

import (
	"context"
	"testing"
)

// MigrateDownOne rolls the newest migration back, leaving it pending.
func MigrateDownOne(t testing.TB, s *Store) {
	t.Helper()
	p, err := s.provider(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Down(context.Background()); err != nil {
		t.Fatal(err)
	}
}
