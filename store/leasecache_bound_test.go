package store

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// TestLeaseCache_bounded: however many leased operations are written, the
// cache holds at most leaseCacheMax of them and leaseCacheBytes of content.
func TestLeaseCache_bounded(t *testing.T) {
	c := newLeaseCache()
	leased := func(i, content int) domain.Change {
		return domain.Change{Op: domain.Operation{ID: fmt.Sprintf("op_%d", i), State: domain.Processing, LeaseToken: 1,
			Lease: &domain.Lease{Token: 1, ExpiresAt: time.Now().Add(time.Minute)}, Content: bytes.Repeat([]byte("x"), content)}}
	}
	for i := range 3 * leaseCacheMax {
		c.wrote(leased(i, 0), nil)
		if len(c.ops) > leaseCacheMax {
			t.Fatalf("%d entries", len(c.ops))
		}
	}
	for i := range 2 * leaseCacheBytes / (64 << 10) {
		c.wrote(leased(i, 64<<10), nil)
		if c.bytes > leaseCacheBytes {
			t.Fatalf("%d bytes in %d entries", c.bytes, len(c.ops))
		}
	}
	ch := leased(-1, 10)
	c.wrote(ch, nil)
	if _, ok := c.ops[ch.Op.ID]; !ok {
		t.Fatal("the last write is not remembered")
	}
	c.wrote(ch, domain.Errorf(domain.EUnavailable, "outcome unknown"))
	if _, ok := c.ops[ch.Op.ID]; ok {
		t.Fatal("a write of unknown outcome is still remembered")
	}
}
