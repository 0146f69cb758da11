package store

import (
	"context"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// credentials is the store's part for who may call: the sign-in's login
// attempts and sessions, API tokens and their revocations, and the
// server's key.
type credentials struct{ *conn }

var _ domain.SessionStore = (*credentials)(nil)

// loginAttemptRow is a sign-in waiting for the provider's answer.
type loginAttemptRow struct {
	StateHash    string `gorm:"column:state_hash;primaryKey"`
	NonceHash    string
	CodeVerifier string
	ReturnTo     string
	CreatedAt    time.Time `gorm:"autoCreateTime:false"`
	ExpiresAt    time.Time
}

func (loginAttemptRow) TableName() string { return "login_attempts" }

// sessionRow is a desk session; Hash is the SHA-256 of the cookie value.
type sessionRow struct {
	Hash       string `gorm:"column:hash;primaryKey"`
	Issuer     string
	Subject    string
	Email      string
	Name       string
	Role       string
	CreatedAt  time.Time `gorm:"autoCreateTime:false"`
	LastSeenAt time.Time
}

func (sessionRow) TableName() string { return "sessions" }

// personRow is someone who signed in, keyed on (issuer, subject).
type personRow struct {
	Issuer      string `gorm:"column:issuer;primaryKey"`
	Subject     string `gorm:"column:subject;primaryKey"`
	Email       string
	Name        string
	Role        string
	FirstSeenAt time.Time
	LastSeenAt  time.Time
}

func (personRow) TableName() string { return "people" }

// CreateLoginAttempt stores a pending sign-in.
func (s *credentials) CreateLoginAttempt(ctx context.Context, a domain.LoginAttempt) error {
	row := loginAttemptRow{StateHash: a.StateHash, NonceHash: a.NonceHash, CodeVerifier: a.CodeVerifier,
		ReturnTo: a.ReturnTo, CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC()}
	return translate(s.db.WithContext(ctx).Create(&row).Error, "login attempt")
}

// TakeLoginAttempt reads and deletes the attempt in one transaction. The
// delete decides who took it: a concurrent taker's delete matches no row.
func (s *credentials) TakeLoginAttempt(ctx context.Context, stateHash string) (domain.LoginAttempt, error) {
	var row loginAttemptRow
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Where("state_hash = ?", stateHash).Take(&row).Error; err != nil {
			return err
		}
		res := tx.Where("state_hash = ?", stateHash).Delete(&loginAttemptRow{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected != 1 {
			return gorm.ErrRecordNotFound
		}
		return nil
	})
	if err != nil {
		return domain.LoginAttempt{}, translate(err, "login attempt")
	}
	return domain.LoginAttempt{StateHash: row.StateHash, NonceHash: row.NonceHash, CodeVerifier: row.CodeVerifier,
		ReturnTo: row.ReturnTo, CreatedAt: row.CreatedAt.UTC(), ExpiresAt: row.ExpiresAt.UTC()}, nil
}

// PurgeLoginAttempts removes attempts that expired before now.
func (s *credentials) PurgeLoginAttempts(ctx context.Context, now time.Time) error {
	err := s.db.WithContext(ctx).Where("expires_at < ?", now.UTC()).Delete(&loginAttemptRow{}).Error
	return translate(err, "login attempt")
}

// CreateSession records the person, the new session and the sign-in's
// audit event together.
func (s *credentials) CreateSession(ctx context.Context, sess domain.Session, e domain.AuditEvent) error {
	p := sess.Person
	at := sess.CreatedAt.UTC()
	person := personRow{Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name, Role: p.Role.String(),
		FirstSeenAt: at, LastSeenAt: at}
	row := sessionRow{Hash: sess.Hash, Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name,
		Role: p.Role.String(), CreatedAt: at, LastSeenAt: sess.LastSeenAt.UTC()}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		err := tx.Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "issuer"}, {Name: "subject"}},
			DoUpdates: clause.AssignmentColumns([]string{"email", "name", "role", "last_seen_at"}),
		}).Create(&person).Error
		if err != nil {
			return err
		}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		_, err = s.appendSystemLocked(tx, e)
		return err
	})
	return translate(err, "session")
}

// SessionByHash returns the session with that hash.
func (s *credentials) SessionByHash(ctx context.Context, hash string) (domain.Session, error) {
	var row sessionRow
	if err := s.db.WithContext(ctx).Where("hash = ?", hash).Take(&row).Error; err != nil {
		return domain.Session{}, translate(err, "session")
	}
	role, err := domain.ParseRole(row.Role)
	if err != nil {
		return domain.Session{}, domain.Wrap(domain.EInternal, err, "unreadable session row")
	}
	return domain.Session{Hash: row.Hash, CreatedAt: row.CreatedAt.UTC(), LastSeenAt: row.LastSeenAt.UTC(),
		Person: domain.Actor{Kind: domain.ActorPerson, Issuer: row.Issuer, Subject: row.Subject, Email: row.Email,
			Name: row.Name, Role: role}}, nil
}

// TouchSession records activity on the session.
func (s *credentials) TouchSession(ctx context.Context, hash string, at time.Time) error {
	err := s.db.WithContext(ctx).Model(&sessionRow{}).Where("hash = ?", hash).Update("last_seen_at", at.UTC()).Error
	return translate(err, "session")
}

// DeleteSession ends the session.
func (s *credentials) DeleteSession(ctx context.Context, hash string) error {
	return translate(s.db.WithContext(ctx).Where("hash = ?", hash).Delete(&sessionRow{}).Error, "session")
}

// PurgeSessions removes sessions past either timeout.
func (s *credentials) PurgeSessions(ctx context.Context, idleBefore, createdBefore time.Time) error {
	err := s.db.WithContext(ctx).Where("last_seen_at < ? OR created_at < ?", idleBefore.UTC(), createdBefore.UTC()).
		Delete(&sessionRow{}).Error
	return translate(err, "session")
}
