package store

import (
	"context"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// revokedChannel is the PostgreSQL channel on which a revocation names the
// revoked token's hash to every process listening.
const revokedChannel = "handoff_token_revoked"

var (
	_ domain.TokenStore          = (*credentials)(nil)
	_ domain.TokenRevocationFeed = (*credentials)(nil)
)

// tokenRow is an API token; only the hash of its secret is stored.
type tokenRow struct {
	ID         string `gorm:"column:id;primaryKey"`
	Namespace  string
	Name       string
	Hash       string
	PersonRole string
	CreatedAt  time.Time `gorm:"autoCreateTime:false"`
	RevokedAt  *time.Time
	LastUsedAt *time.Time
}

func (tokenRow) TableName() string { return "api_tokens" }

func (r tokenRow) toDomain() domain.APIToken {
	return domain.APIToken{ID: r.ID, Namespace: r.Namespace, Name: r.Name, Hash: r.Hash, PersonRole: r.PersonRole,
		CreatedAt: r.CreatedAt.UTC(), RevokedAt: utcPtr(r.RevokedAt), LastUsedAt: utcPtr(r.LastUsedAt)}
}

// CreateToken stores a new token and its audit event in one transaction.
func (s *credentials) CreateToken(ctx context.Context, t domain.APIToken, e domain.AuditEvent) error {
	row := tokenRow{ID: t.ID, Namespace: t.Namespace, Name: t.Name, Hash: t.Hash, PersonRole: t.PersonRole, CreatedAt: t.CreatedAt.UTC()}
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		_, err := s.appendSystemLocked(tx, e)
		return err
	})
	return translate(err, "token")
}

// TouchToken records the token's last use, once for all the requests that
// find it older than notBefore.
func (s *credentials) TouchToken(ctx context.Context, id string, at, notBefore time.Time) error {
	err := s.db.WithContext(ctx).Model(&tokenRow{}).
		Where("id = ? AND (last_used_at IS NULL OR last_used_at < ?)", id, notBefore.UTC()).
		Update("last_used_at", at.UTC()).Error
	return translate(err, "token")
}

// TokenByHash finds a token by the hash of its secret.
func (s *credentials) TokenByHash(ctx context.Context, hash string) (domain.APIToken, error) {
	var row tokenRow
	if err := s.db.WithContext(ctx).Where("hash = ?", hash).Take(&row).Error; err != nil {
		return domain.APIToken{}, translate(err, "token")
	}
	return row.toDomain(), nil
}

// ListTokens lists every token, oldest first.
func (s *credentials) ListTokens(ctx context.Context) ([]domain.APIToken, error) {
	var rows []tokenRow
	if err := s.db.WithContext(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err, "token")
	}
	out := make([]domain.APIToken, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// RevokeToken marks a token revoked. On PostgreSQL the same statement
// notifies every listening process, at its commit.
func (s *credentials) RevokeToken(ctx context.Context, id string, at time.Time) error {
	if s.dialect.notifies() {
		var hashes []string
		err := s.db.WithContext(ctx).Raw("WITH r AS (UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL RETURNING hash) "+
			"SELECT hash FROM r, pg_notify('"+revokedChannel+"', r.hash) AS n", at.UTC(), id).Scan(&hashes).Error
		if err != nil {
			return translate(err, "token")
		}
		if len(hashes) == 0 {
			return domain.Errorf(domain.ENotFound, "no live token with id %q", id)
		}
		return nil
	}
	res := s.db.WithContext(ctx).Model(&tokenRow{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", at.UTC())
	if res.Error != nil {
		return translate(res.Error, "token")
	}
	if res.RowsAffected == 0 {
		return domain.Errorf(domain.ENotFound, "no live token with id %q", id)
	}
	return nil
}

// WatchRevocations implements domain.TokenRevocationFeed: on PostgreSQL it
// LISTENs on a connection of its own, and listens again after losing it.
// SQLite has no feed, so it returns at once.
func (s *credentials) WatchRevocations(ctx context.Context, live func(bool), revoked func(hash string)) error {
	if !s.dialect.notifies() {
		return nil
	}
	for {
		err := s.listenRevocations(ctx, live, revoked)
		if ctx.Err() != nil {
			return nil
		}
		slog.Warn("token revocation feed lost; verified tokens are not cached until it is back", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Second):
		}
	}
}

func (s *credentials) listenRevocations(ctx context.Context, live func(bool), revoked func(hash string)) error {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+revokedChannel); err != nil {
		return err
	}
	live(true)
	defer live(false)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		revoked(n.Payload)
	}
}
