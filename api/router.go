package api

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/opshandoff/handoff/domain"
)

// Config is what the API needs from its wiring (cmd/handoff).
type Config struct {
	Ledger *domain.Ledger
	// Auth verifies bearer credentials; auth.Chain implements it. nil
	// refuses every authenticated route.
	Auth Authenticator
	// Ready reports whether the database answers and is migrated (/readyz);
	// nil means always ready.
	Ready func(context.Context) error
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// BodyLimit bounds request bodies in bytes; 0 means DefaultBodyLimit.
	BodyLimit int64
	// Registry receives the HTTP metrics and is served at /metrics. nil: a
	// fresh registry with the Go and process collectors and the recovery
	// metrics (NewRecovery), which then observe a ledger that has no
	// Observer; a caller that passes one registers and wires those itself.
	Registry *prometheus.Registry
	// TrustedProxies are the addresses (CIDRs) whose X-Forwarded-For is
	// believed for the client address. Empty: none, the peer is the client.
	TrustedProxies []string
	// Now is the clock for relative filters such as older_than.
	Now func() time.Time
	// ExportChunkTimeout is how long one chunk of an audit export waits for
	// a reader that does not read; 0 means DefaultExportChunkTimeout.
	ExportChunkTimeout time.Duration
	// Executor runs POST /v1/execute/{type}; nil answers it 503.
	Executor Executor
	// Getenv reads the secrets a card names for request signatures;
	// default os.Getenv.
	Getenv func(string) string
	// Tracing makes an OpenTelemetry span per call through the global
	// provider, continuing the caller's traceparent (trace.go).
	Tracing bool
}

// DefaultExportChunkTimeout bounds each write of an audit export: the
// export as a whole may take as long as it needs, a reader that stops
// reading is cut off like any slow client.
const DefaultExportChunkTimeout = 30 * time.Second

// New builds the API's gin engine from the route table.
func New(cfg Config) (*gin.Engine, error) {
	gin.SetMode(gin.ReleaseMode)
	s := &server{ledger: cfg.Ledger, auth: cfg.Auth, ready: cfg.Ready, log: cfg.Logger,
		bodyLimit: cfg.BodyLimit, now: cfg.Now, exportChunkTimeout: cfg.ExportChunkTimeout,
		executor: cfg.Executor, getenv: cfg.Getenv}
	if s.getenv == nil {
		s.getenv = os.Getenv
	}
	if s.exportChunkTimeout <= 0 {
		s.exportChunkTimeout = DefaultExportChunkTimeout
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.bodyLimit <= 0 {
		s.bodyLimit = DefaultBodyLimit
	}
	if s.now == nil {
		s.now = time.Now
	}
	reg := cfg.Registry
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		if cfg.Ledger != nil && cfg.Ledger.Observer == nil {
			r, err := NewRecovery(reg, cfg.Ledger.Store)
			if err != nil {
				return nil, fmt.Errorf("recovery metrics: %w", err)
			}
			cfg.Ledger.Observer, cfg.Ledger.Workflow.Events = r, r
		}
	}
	m, err := newMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("api metrics: %w", err)
	}
	s.metricsHandler = promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	if s.openapiDoc, err = openAPIJSON(routes); err != nil {
		return nil, fmt.Errorf("api openapi document: %w", err)
	}

	// gin.New, not gin.Default: gin's logger and recovery print requests
	// (headers included) to stdout; ours log through slog without them.
	e := gin.New()
	if err := e.SetTrustedProxies(cfg.TrustedProxies); err != nil {
		return nil, fmt.Errorf("api trusted proxies: %w", err)
	}
	if cfg.Tracing {
		e.Use(s.tracing)
	}
	e.Use(s.withRequestID(&domain.IDSource{}), apiHeaders, m.observe, s.accessLog, s.recovery)
	e.NoRoute(s.notFound)
	for _, r := range routes {
		handle := func(c *gin.Context) { r.Handle(s, c) }
		if r.Public {
			e.Handle(r.Method, r.Path, handle)
		} else {
			e.Handle(r.Method, r.Path, s.authenticate, handle)
		}
	}
	return e, nil
}

// openAPIPath converts a gin path to an OpenAPI one: :id becomes {id}.
func openAPIPath(p string) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		if name, ok := strings.CutPrefix(part, ":"); ok {
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/")
}
