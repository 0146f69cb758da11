package web

import (
	"log/slog"
	"net/http"
	"path"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/static"
)

// Config is what the desk needs from its wiring (cmd/handoff).
type Config struct {
	Ledger *domain.Ledger
	Logger *slog.Logger
	// TrustedProxies are the addresses whose X-Forwarded-For is believed.
	TrustedProxies []string
	// SignIn is how people sign in (signin.go).
	SignIn SignIn
}

// server holds what every desk handler needs.
type server struct {
	ledger *domain.Ledger
	log    *slog.Logger
	signIn *signIn
}

// New builds the desk's gin engine.
func New(cfg Config) (*gin.Engine, error) {
	gin.SetMode(gin.ReleaseMode)
	s := &server{ledger: cfg.Ledger, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.Default()
	}
	var err error
	if s.signIn, err = newSignIn(cfg.SignIn); err != nil {
		return nil, err
	}
	e := gin.New()
	if err := e.SetTrustedProxies(cfg.TrustedProxies); err != nil {
		return nil, err
	}
	e.Use(securityHeaders, compress) // compress.go
	e.GET("/static/*file", serveStatic)
	s.signInRoutes(e) // signin.go: sign-in, sign-out, sessions, CSRF
	s.deskRoutes(e)   // desk.go: the pages
	// The front door: whoever opens the server's address wants the desk.
	e.GET("/", func(c *gin.Context) { c.Redirect(http.StatusFound, "/desk") })
	return e, nil
}

// keyPerson is the gin context key of the signed-in person (a domain.Actor
// of kind person), set by the session middleware.
const keyPerson = "handoff.person"

// keyExpired is the person whose session the request's cookie named when
// it had just expired: not signed in, but the owner of what they typed.
const keyExpired = "handoff.expired"

// personOf returns the signed-in person, if any.
func personOf(c *gin.Context) (domain.Actor, bool) {
	v, ok := c.Get(keyPerson)
	a, isActor := v.(domain.Actor)
	return a, ok && isActor && a.Kind == domain.ActorPerson
}

// contentSecurityPolicy lets the page load only what the server serves: no
// inline script, no other origin.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"

func securityHeaders(c *gin.Context) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	c.Next()
}

// serveStatic serves the embedded files by their content-hashed names, to be
// cached forever.
func serveStatic(c *gin.Context) {
	name, ok := static.Resolve(path.Clean(c.Param("file"))[1:])
	if !ok {
		c.Status(http.StatusNotFound)
		return
	}
	c.Header("Cache-Control", "public, max-age=31536000, immutable")
	c.FileFromFS(name, http.FS(static.FS))
}

// render writes a templ component as the response, with the request's
// context, so a cancelled request stops rendering.
func render(c *gin.Context, status int, component templ.Component) {
	c.Status(status)
	c.Header("Content-Type", "text/html; charset=utf-8")
	if err := component.Render(withTime(c), c.Writer); err != nil {
		_ = c.Error(err)
	}
}
