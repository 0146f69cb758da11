package domain

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// crockford is the ULID alphabet: no I, L, O or U.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// IDSource makes sortable unique IDs: prefix, "_", then a 26-character ULID
// (48 bits of milliseconds, 80 random bits). IDs made in the same millisecond
// by one source increase.
type IDSource struct {
	Now func() time.Time

	mu   sync.Mutex
	last [16]byte
}

// New returns a fresh ID with the given prefix.
func (s *IDSource) New(prefix string) string {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	ms := uint64(now().UnixMilli())
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], ms<<16)
	s.mu.Lock()
	if binary.BigEndian.Uint64(s.last[:8])>>16 == ms {
		b = s.last // same millisecond: increment the random part
		for i := 15; i >= 6; i-- {
			b[i]++
			if b[i] != 0 {
				break
			}
		}
	} else {
		_, _ = rand.Read(b[6:])
	}
	s.last = b
	s.mu.Unlock()
	return prefix + "_" + encodeULID(b)
}

func encodeULID(b [16]byte) string {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	out := make([]byte, 26)
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}
