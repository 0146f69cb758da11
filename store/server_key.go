package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// ServerKey returns the database's secret key named name, 32 random bytes
// made by the first caller: every replica sharing the database gets the
// same key, so what one signs the others verify.
func (s *credentials) ServerKey(ctx context.Context, name string) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, domain.Wrap(domain.EInternal, err, "no randomness for a server key")
	}
	db := s.db.WithContext(ctx)
	// Two replicas starting together: one insert wins, both read it.
	err := db.Exec("INSERT INTO server_keys (name, secret, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
		name, hex.EncodeToString(fresh), time.Now().UTC()).Error
	if err != nil {
		return nil, translate(err, "server key")
	}
	var secret string
	if err := db.Raw("SELECT secret FROM server_keys WHERE name = ?", name).Scan(&secret).Error; err != nil {
		return nil, translate(err, "server key")
	}
	key, err := hex.DecodeString(secret)
	if err != nil || len(key) < 32 {
		return nil, domain.Errorf(domain.EInternal, "server key %s is unreadable", name)
	}
	return key, nil
}
