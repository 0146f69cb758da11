package api

import (
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// gin context keys.
const (
	keyRequestID = "handoff.request_id"
	keyActor     = "handoff.actor"
	keyLogLine   = "handoff.log_line"
)

// logLine is what the access log line needs from the middleware before it:
// the client's address, and the change the request wrote.
type logLine struct {
	client string
	change *domain.RequestLog
}

// requestIDRE accepts a caller's X-Request-ID only when it is short and
// plain, so it cannot forge log lines or bloat audit rows.
var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// withRequestID takes or makes the request ID, echoes it, and records it with
// the client address in the request's context for the audit trail.
func (s *server) withRequestID(ids *domain.IDSource) gin.HandlerFunc {
	return func(c *gin.Context) {
		rid := c.GetHeader("X-Request-ID")
		if !requestIDRE.MatchString(rid) {
			rid = ids.New("req")
		}
		c.Set(keyRequestID, rid)
		c.Header("X-Request-ID", rid)
		// ClientIP honours forwarding headers only from Config.TrustedProxies;
		// with none it is the peer address.
		client := c.ClientIP()
		ctx, rl := domain.WithRequestLog(c.Request.Context(), rid, client)
		c.Set(keyLogLine, &logLine{client: client, change: rl})
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

func requestID(c *gin.Context) string { return c.GetString(keyRequestID) }

// apiHeaders keeps browsers from sniffing a JSON answer into something
// else, and every /v1 answer — content snapshots, results, the audit trail —
// out of every cache. The probes and /metrics are not /v1.
func apiHeaders(c *gin.Context) {
	if strings.HasPrefix(c.Request.URL.Path, "/v1/") {
		h := c.Writer.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "no-store")
	}
	c.Next()
}

// recovery turns a panic into the internal problem, logged with the request
// ID and stack; unlike gin's Recovery it never dumps the request headers.
func (s *server) recovery(c *gin.Context) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v == http.ErrAbortHandler { //nolint:errorlint // the sentinel itself is what net/http panics with
			panic(v)
		}
		s.log.ErrorContext(c.Request.Context(), "panic", "request_id", requestID(c), "panic", v, "stack", string(debug.Stack()))
		if c.Writer.Written() {
			c.Abort()
			return
		}
		s.fail(c, domain.Errorf(domain.EInternal, "panic"))
	}()
	c.Next()
}

// accessLog writes one line per request: the route template, never the
// query string or headers, where search text and credentials live.
func (s *server) accessLog(c *gin.Context) {
	start := time.Now()
	c.Next()
	level := slog.LevelInfo
	if c.Writer.Status() < 400 && probes[c.FullPath()] {
		level = slog.LevelDebug // probes and scrapes every few seconds would drown the rest
	}
	ctx := c.Request.Context()
	if !s.log.Enabled(ctx, level) {
		return
	}
	// One line per call: a call that wrote a change carries its fields
	// (key, event, state before and after, attempt) here rather than in a
	// "ledger" line of its own, which was half the log and a tenth of the
	// server's CPU per call.
	v, _ := c.Get(keyLogLine)
	ll, _ := v.(*logLine)
	client := ""
	var change []slog.Attr
	if ll != nil {
		client, change = ll.client, ll.change.Attrs()
	} else {
		client = c.ClientIP()
	}
	attrs := append(make([]slog.Attr, 0, 7+len(change)), slog.String("request_id", requestID(c)),
		slog.String("method", c.Request.Method), slog.String("route", routeLabel(c)), slog.String("path", c.Request.URL.Path),
		slog.Int("status", c.Writer.Status()), slog.Int64("duration_ms", time.Since(start).Milliseconds()), slog.String("client", client))
	s.log.LogAttrs(ctx, level, "request", append(attrs, change...)...)
}

var probes = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// authenticate requires "Authorization: Bearer …" and records the actor.
// Cookies are never read here: the /v1 API is for bearer credentials only,
// which keeps it out of reach of cross-site requests.
func (s *server) authenticate(c *gin.Context) {
	actor, err := s.bearer(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Set(keyActor, actor)
	c.Next()
}

// bearer is the actor the request's bearer credential names.
func (s *server) bearer(c *gin.Context) (domain.Actor, error) {
	scheme, cred, _ := strings.Cut(c.GetHeader("Authorization"), " ")
	cred = strings.TrimSpace(cred)
	if !strings.EqualFold(scheme, "Bearer") || cred == "" || s.auth == nil {
		return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "an Authorization: Bearer header is required")
	}
	return s.auth.Authenticate(c.Request.Context(), cred)
}

// actorOf is the authenticated caller; the zero Actor (which the domain
// refuses everything) if authenticate did not run.
func actorOf(c *gin.Context) domain.Actor {
	a, _ := c.Get(keyActor)
	actor, _ := a.(domain.Actor)
	return actor
}

// notFound answers unmatched paths with the not_found problem.
func (s *server) notFound(c *gin.Context) {
	s.fail(c, domain.Errorf(domain.ENotFound, "no route for %s %s", c.Request.Method, c.Request.URL.Path))
}
