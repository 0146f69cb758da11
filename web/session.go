package web

import (
	"crypto/rand"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/layouts"
)

// signIn is the desk's sign-in configuration with what follows from it.
type signIn struct {
	cfg SignIn
	// The cookie names. Browsers accept a __Host- cookie only when it is
	// Secure, and a Secure cookie only over https; on a plain-http loopback
	// address (development) the cookies go without the prefix.
	sessionCookie, loginCookie string
	secure                     bool
	csrf                       gin.HandlerFunc
	cookieKey                  []byte // signs the flash (flash.go)
}

func newSignIn(cfg SignIn) (*signIn, error) {
	if cfg.Sessions == nil {
		return nil, errors.New("web: Config.SignIn.Sessions is required (auth.NewSessions)")
	}
	if cfg.SessionMaxAge <= 0 {
		cfg.SessionMaxAge = 12 * time.Hour
	}
	si := &signIn{cfg: cfg, sessionCookie: "handoff_session", loginCookie: "handoff_login"}
	if u, err := url.Parse(cfg.PublicURL); err == nil && u.Scheme == "https" {
		si.secure = true
		si.sessionCookie, si.loginCookie = "__Host-"+si.sessionCookie, "__Host-"+si.loginCookie
	}
	csrf, err := crossOriginGuard(cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	si.csrf = csrf
	si.cookieKey = cfg.CookieKey
	if len(si.cookieKey) == 0 {
		si.cookieKey = make([]byte, 32)
		if _, err := rand.Read(si.cookieKey); err != nil {
			return nil, err
		}
	} else if len(si.cookieKey) < 32 {
		return nil, errors.New("web: Config.SignIn.CookieKey must be at least 32 bytes")
	}
	return si, nil
}

// isDevelopment reports whether the development sign-in is in use.
func (si *signIn) isDevelopment() bool { return si.cfg.OIDC == nil }

// setCookie sets a host-only, HttpOnly, SameSite=Lax cookie for the whole
// site. Lax, not Strict: the provider's redirect back to /auth/callback is a
// cross-site navigation that must carry the login cookie.
func (si *signIn) setCookie(c *gin.Context, name, value string, maxAge time.Duration) {
	http.SetCookie(c.Writer, &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: int(maxAge.Seconds()),
		Secure: si.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

func (si *signIn) clearCookie(c *gin.Context, name string) {
	http.SetCookie(c.Writer, &http.Cookie{Name: name, Value: "", Path: "/", MaxAge: -1,
		Secure: si.secure, HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// loadSession sets keyPerson when the request carries a live session
// cookie. A cookie whose session is gone or expired is cleared; the page
// that needs a person then sends the browser to sign in.
func (s *server) loadSession(c *gin.Context) {
	secret, err := c.Cookie(s.signIn.sessionCookie)
	if err != nil || secret == "" {
		c.Next()
		return
	}
	person, err := s.signIn.cfg.Sessions.Lookup(c.Request.Context(), secret)
	switch {
	case err == nil:
		c.Set(keyPerson, person)
	case domain.ErrorCode(err) == domain.EUnauthenticated:
		s.signIn.clearCookie(c, s.signIn.sessionCookie)
		if person.Kind == domain.ActorPerson {
			c.Set(keyExpired, person) // whose decision keepExpiredDecision keeps
		}
	default:
		s.log.ErrorContext(c.Request.Context(), "session lookup failed", "error", err.Error())
		c.Header("Retry-After", "2")
		c.String(http.StatusServiceUnavailable, "The desk cannot reach its database; try again shortly.")
		c.Abort()
		return
	}
	c.Next()
}

// requirePerson lets the request through only with a signed-in person;
// anyone else is sent to sign in and brought back here afterwards (htmx
// requests are told to navigate, not to swap a sign-in page into a
// fragment).
func requirePerson(c *gin.Context) {
	if _, ok := personOf(c); ok {
		c.Next()
		return
	}
	next := c.Request.URL.RequestURI()
	if c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead {
		next = "/desk" // a form's target is no page to come back to
	}
	target := "/auth/login?next=" + url.QueryEscape(safeNext(next))
	if c.GetHeader("HX-Request") == "true" {
		c.Header("HX-Redirect", target)
		c.AbortWithStatus(http.StatusUnauthorized)
		return
	}
	c.Redirect(http.StatusSeeOther, target)
	c.Abort()
}

// frameFor is the layout frame of a desk page: who is signed in, and the
// development sign-in banner when it is in use.
func (s *server) frameFor(c *gin.Context, title, active string) layouts.Frame {
	// A key or an error code may hold a bidi control: the tab's title shows
	// it escaped, as the page does.
	f := layouts.Frame{Title: components.SafeString(title), Active: active, DevSignIn: s.signIn.isDevelopment(), Time: string(timeMode(c)), Density: density(c), Return: "/desk"}
	f.Theme = theme(c) // theme.go
	if c.Request.Method == http.MethodGet {
		f.Return = c.Request.URL.RequestURI()
	}
	if p, ok := personOf(c); ok {
		if !htmx(c) { // a fragment shows no navigation
			f.Desk = s.deskCounts(c) // nav.go
		}
		f.Person, f.Role = strings.TrimSpace(p.Name), p.Role.String()
		if f.Person == "" {
			f.Person = p.Identity()
		}
	}
	return f
}
