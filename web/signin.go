package web

import (
	"context"
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// SignIn is how people sign in to the desk.
type SignIn struct {
	// OIDC signs people in with the provider (auth.OIDC); nil offers the
	// development sign-in, which cmd/handoff allows only on loopback.
	OIDC OIDCFlow
	// Sessions keeps desk sessions (auth.Sessions). Required.
	Sessions SessionKeeper
	// PublicURL is where browsers reach the desk. https makes the cookies
	// Secure and __Host- prefixed; its origin is trusted as same-origin.
	PublicURL string
	// SessionMaxAge is the cookie's lifetime: the sessions' absolute
	// timeout. The server enforces both timeouts whatever the browser keeps.
	SessionMaxAge time.Duration
	// CookieKey signs the flash cookie (flash.go): at least 32 bytes,
	// the same on every replica — cmd/handoff reads it from the database
	// (store.ServerKey). Empty: a random key of this process, which only a
	// single replica can use.
	CookieKey []byte
}

// OIDCFlow is what the desk needs of the OIDC sign-in (auth.OIDC).
type OIDCFlow interface {
	Issuer() string
	Begin(ctx context.Context, returnTo string) (state, authURL string, err error)
	Finish(ctx context.Context, state, code string) (person domain.Actor, returnTo string, err error)
}

// SessionKeeper is what the desk needs of sessions (auth.Sessions).
type SessionKeeper interface {
	Start(ctx context.Context, person domain.Actor, method string) (secret string, err error)
	// Lookup refuses an expired session with EUnauthenticated and, when
	// it can still tell, the person whose session it was.
	Lookup(ctx context.Context, secret string) (domain.Actor, error)
	End(ctx context.Context, secret string) error
}

// signInRoutes registers sign-in and sign-out, and puts the CSRF guard and
// the session middleware in front of every route registered after it.
func (s *server) signInRoutes(e *gin.Engine) {
	e.Use(s.signIn.csrf, s.loadSession)
	a := e.Group("/auth", limitBody, noStore) // body.go
	a.GET("/login", s.loginPage)
	a.POST("/login", s.devLogin)
	a.GET("/start", s.startOIDC)
	a.GET("/callback", s.callback)
	a.POST("/logout", s.logout)
	a.GET("/signed-out", s.signedOut)
}

// noStore keeps sign-in answers, which set and clear cookies, out of every
// cache.
func noStore(c *gin.Context) {
	c.Header("Cache-Control", "no-store")
	c.Next()
}

// signInView is the sign-in page's view model for this server.
func (s *server) signInView(c *gin.Context, next string) pages.SignInView {
	v := pages.SignInView{Frame: s.frameFor(c, "Sign in", ""), Dev: s.signIn.isDevelopment(), Next: next}
	v.Frame.Person, v.Frame.Role = "", "" // the sign-in page has no navigation
	if s.signIn.isDevelopment() {
		for _, r := range domain.Roles {
			v.Roles = append(v.Roles, r.String())
		}
		v.Role = domain.RoleOperator.String()
	} else {
		v.Provider = hostOf(s.signIn.cfg.OIDC.Issuer())
		v.StartURL = "/auth/start?next=" + url.QueryEscape(next)
	}
	return v
}

// loginPage shows the development form, or sends the browser on to the
// provider: with OIDC there is nothing to fill in here.
func (s *server) loginPage(c *gin.Context) {
	next := safeNext(c.Query("next"))
	// After a decision posted with an expired session the page is shown,
	// not skipped: it says what happened, and the browser may not follow a
	// form's redirect to the provider (CSP form-action).
	expired := c.Query("expired") != ""
	if !s.signIn.isDevelopment() && !expired {
		c.Redirect(http.StatusSeeOther, "/auth/start?next="+url.QueryEscape(next))
		return
	}
	v := s.signInView(c, next)
	v.Expired = expired
	render(c, http.StatusOK, pages.SignInPage(v))
}

// devLogin signs in whoever the development form names.
func (s *server) devLogin(c *gin.Context) {
	if !s.signIn.isDevelopment() {
		c.Status(http.StatusNotFound)
		return
	}
	next := safeNext(c.PostForm("next"))
	person, err := auth.DevPerson(c.PostForm("name"), c.PostForm("role"))
	if err != nil {
		v := s.signInView(c, next)
		v.Name, v.Role, v.Error = c.PostForm("name"), c.PostForm("role"), domain.AsError(err).Message
		render(c, http.StatusBadRequest, pages.SignInPage(v))
		return
	}
	s.startSession(c, person, "development", next)
}

// startOIDC records a pending sign-in and sends the browser to the
// provider. The state also goes into a short-lived cookie: the callback
// must come back to the browser that started, or anyone could hand a victim
// a callback link that signs them in as the attacker.
func (s *server) startOIDC(c *gin.Context) {
	if s.signIn.isDevelopment() {
		c.Redirect(http.StatusSeeOther, "/auth/login")
		return
	}
	state, authURL, err := s.signIn.cfg.OIDC.Begin(c.Request.Context(), safeNext(c.Query("next")))
	if err != nil {
		s.signInFailed(c, err)
		return
	}
	s.signIn.setCookie(c, s.signIn.loginCookie, state, auth.LoginTTL)
	c.Redirect(http.StatusFound, authURL)
}

// callback finishes an OIDC sign-in.
func (s *server) callback(c *gin.Context) {
	if s.signIn.isDevelopment() {
		c.Status(http.StatusNotFound)
		return
	}
	q := c.Request.URL.Query()
	bound, _ := c.Cookie(s.signIn.loginCookie)
	s.signIn.clearCookie(c, s.signIn.loginCookie)
	state := q.Get("state")
	if state == "" || bound == "" || subtle.ConstantTimeCompare([]byte(state), []byte(bound)) != 1 {
		s.signInFailed(c, domain.Errorf(domain.EUnauthenticated, "this sign-in did not start in this browser, or it expired"))
		return
	}
	if e := q.Get("error"); e != "" {
		s.signInFailed(c, domain.Errorf(domain.EUnauthenticated, "the provider did not sign you in (%s)", clip(e, 64)))
		return
	}
	person, next, err := s.signIn.cfg.OIDC.Finish(c.Request.Context(), state, q.Get("code"))
	if err != nil {
		s.signInFailed(c, err)
		return
	}
	s.startSession(c, person, "oidc", next)
}

// startSession gives the browser a new session: whatever session it had is
// ended first, so a session ID never survives a sign-in (no fixation).
func (s *server) startSession(c *gin.Context, person domain.Actor, method, next string) {
	ctx := auditContext(c)
	if old, err := c.Cookie(s.signIn.sessionCookie); err == nil && old != "" {
		if err := s.signIn.cfg.Sessions.End(ctx, old); err != nil {
			s.signInFailed(c, err)
			return
		}
	}
	secret, err := s.signIn.cfg.Sessions.Start(ctx, person, method)
	if err != nil {
		s.signInFailed(c, err)
		return
	}
	s.signIn.setCookie(c, s.signIn.sessionCookie, secret, s.signIn.cfg.SessionMaxAge)
	s.log.InfoContext(ctx, "signed in", "issuer", person.Issuer, "subject", person.Subject, "role", person.Role.String(), "method", method)
	c.Redirect(http.StatusSeeOther, next)
}

// logout ends the session on the server, then forgets the cookie.
func (s *server) logout(c *gin.Context) {
	if secret, err := c.Cookie(s.signIn.sessionCookie); err == nil && secret != "" {
		if err := s.signIn.cfg.Sessions.End(auditContext(c), secret); err != nil {
			s.signInFailed(c, err)
			return
		}
	}
	s.signIn.clearCookie(c, s.signIn.sessionCookie)
	s.signIn.clearCookie(c, s.signIn.flashCookie()) // what they typed leaves with them
	c.Redirect(http.StatusSeeOther, "/auth/signed-out")
}

func (s *server) signedOut(c *gin.Context) {
	v := s.signInView(c, "/desk")
	v.SignedOut = true
	render(c, http.StatusOK, pages.SignInPage(v))
}

// signInFailed shows why a sign-in failed. The cause is logged for the
// operator (errors here never carry a token); the page says only what the
// person can act on.
func (s *server) signInFailed(c *gin.Context, err error) {
	e := domain.AsError(err)
	status := map[domain.Code]int{domain.EUnauthenticated: http.StatusUnauthorized, domain.EForbidden: http.StatusForbidden,
		domain.EInvalid: http.StatusBadRequest, domain.EUnavailable: http.StatusServiceUnavailable}[e.Code]
	msg := e.Message
	if status == 0 {
		status, msg = http.StatusInternalServerError, "internal error"
	}
	s.log.WarnContext(c.Request.Context(), "sign-in failed", "code", string(e.Code), "error", e.Error())
	v := s.signInView(c, "/desk")
	v.Error = msg
	render(c, status, pages.SignInPage(v))
}

// auditContext records the client's address (as gin.ClientIP sees it:
// forwarding headers only from trusted proxies) on the sign-in and
// sign-out events.
func auditContext(c *gin.Context) context.Context {
	return domain.WithRequestInfo(c.Request.Context(), "", c.ClientIP())
}

// safeNext keeps the post-sign-in redirect on this site: a local absolute
// path, never "//host" or a URL, so sign-in cannot be an open redirect.
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.ContainsAny(next, "\\\r\n\t") || len(next) > 2000 {
		return "/desk"
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" {
		return "/desk"
	}
	return next
}

func hostOf(issuer string) string {
	if u, err := url.Parse(issuer); err == nil && u.Host != "" {
		return u.Host
	}
	return issuer
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
