package store_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestServerKey: two servers on one database get the same key, made once;
// another name is another key.
func TestServerKey(t *testing.T) {
	ctx := context.Background()
	url := storetest.URL(t)
	open := func() *store.Store {
		s, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	a, b := open(), open()
	ka, err := a.ServerKey(ctx, "cookies")
	if err != nil || len(ka) != 32 {
		t.Fatalf("key %x %v", ka, err)
	}
	kb, err := b.ServerKey(ctx, "cookies")
	if err != nil || !bytes.Equal(ka, kb) {
		t.Fatalf("the second server's key %x differs from %x (%v)", kb, ka, err)
	}
	if other, err := a.ServerKey(ctx, "other"); err != nil || bytes.Equal(other, ka) {
		t.Fatalf("another name: %x %v", other, err)
	}
}
