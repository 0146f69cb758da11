package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// Sessions are desk sign-ins, kept server-side. The browser holds a random
// secret; the database holds its SHA-256 and the person. Both timeouts are
// enforced here, against the injected clock, on every lookup — never left to
// the cookie's own expiry, which the browser controls.
type Sessions struct {
	Store domain.SessionStore
	Audit domain.SystemAuditor
	IDs   *domain.IDSource
	Now   func() time.Time
	// Idle ends a session nobody used for this long; Absolute ends every
	// session this long after sign-in, used or not.
	Idle     time.Duration
	Absolute time.Duration
}

// The default timeouts: a shift's worth of work, and half an hour away from
// the desk.
const (
	DefaultIdleTimeout     = 30 * time.Minute
	DefaultAbsoluteTimeout = 12 * time.Hour
)

// touchEvery limits last-seen writes to one a minute per session, so a page
// that polls does not write on every request; the idle timeout is honoured
// to within that minute.
const touchEvery = time.Minute

// MinIdleTimeout is the shortest idle timeout that can be honoured: with
// activity recorded once a minute, a shorter one would end sessions in use.
const MinIdleTimeout = touchEvery

// NewSessions wires Sessions with the real clock and the default timeouts.
func NewSessions(s domain.SessionStore, audit domain.SystemAuditor) *Sessions {
	return &Sessions{Store: s, Audit: audit, IDs: &domain.IDSource{}, Now: time.Now,
		Idle: DefaultIdleTimeout, Absolute: DefaultAbsoluteTimeout}
}

// randomSecret is 32 random bytes, base64url: unguessable, and safe in a
// cookie or a URL.
func randomSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Start signs the person in with a new session and returns the cookie
// value. The session and its signed_in audit event commit together: no
// session nobody audited, no audited sign-in without its session. method
// says how: "oidc" or "development".
func (s *Sessions) Start(ctx context.Context, person domain.Actor, method string) (string, error) {
	if person.Kind != domain.ActorPerson || person.Role.IsZero() || person.Subject == "" {
		return "", domain.Errorf(domain.EInternal, "a session needs a person with a subject and a role")
	}
	now := s.Now().UTC().Truncate(time.Microsecond)
	if err := s.Store.PurgeSessions(ctx, now.Add(-s.Idle), now.Add(-s.Absolute)); err != nil {
		return "", err
	}
	secret := randomSecret()
	hash := HashToken(secret)
	e := domain.SystemEvent(ctx, s.IDs, now, person, "signed_in", "", map[string]any{
		"method": method, "issuer": person.Issuer, "subject": person.Subject, "email": person.Email,
		"role": person.Role.String(), "session": sessionRef(hash)})
	if err := s.Store.CreateSession(ctx, domain.Session{Hash: hash, Person: person, CreatedAt: now, LastSeenAt: now}, e); err != nil {
		return "", err
	}
	return secret, nil
}

// sessionRef names a session in the audit trail without anything that
// could be presented as a cookie: a prefix of the stored hash.
func sessionRef(hash string) string { return hash[:12] }

// Lookup returns the person a session cookie stands for. A session past
// either timeout is deleted and refused.
func (s *Sessions) Lookup(ctx context.Context, secret string) (domain.Actor, error) {
	if secret == "" || len(secret) > maxSecretLen {
		return domain.Actor{}, errNoSession()
	}
	hash := HashToken(secret)
	sess, err := s.Store.SessionByHash(ctx, hash)
	if domain.ErrorCode(err) == domain.ENotFound {
		return domain.Actor{}, errNoSession()
	} else if err != nil {
		return domain.Actor{}, err
	}
	now := s.Now().UTC()
	if now.Sub(sess.LastSeenAt) >= s.Idle || now.Sub(sess.CreatedAt) >= s.Absolute {
		if err := s.Store.DeleteSession(ctx, hash); err != nil {
			return domain.Actor{}, err
		}
		// Refused, but with whose it was: the desk keeps a decision typed
		// into an expired session for that person, and for nobody else.
		return sess.Person, domain.Errorf(domain.EUnauthenticated, "your session expired; sign in again")
	}
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		if err := s.Store.TouchSession(ctx, hash, now); err != nil {
			return domain.Actor{}, err
		}
	}
	return sess.Person, nil
}

// End signs out: the session is deleted server-side, so the cookie is
// worthless even if the browser keeps it.
func (s *Sessions) End(ctx context.Context, secret string) error {
	if secret == "" || len(secret) > maxSecretLen {
		return nil
	}
	hash := HashToken(secret)
	sess, err := s.Store.SessionByHash(ctx, hash)
	if domain.ErrorCode(err) == domain.ENotFound {
		return nil
	} else if err != nil {
		return err
	}
	if err := s.Store.DeleteSession(ctx, hash); err != nil {
		return err
	}
	e := domain.SystemEvent(ctx, s.IDs, s.Now(), sess.Person, "signed_out", "", map[string]any{"session": sessionRef(hash)})
	_, err = s.Audit.AppendSystem(ctx, e)
	return err
}

func errNoSession() error { return domain.Errorf(domain.EUnauthenticated, "not signed in") }
