package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/execute"
	"github.com/opshandoff/handoff/notify"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/web"
)

// routes sends the JSON API and the service endpoints to the api package and
// everything else — the desk, sign-in, static files — to the web package.
func routes(apiHandler, deskHandler http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, p := range []string{"/v1/", "/healthz", "/readyz", "/metrics"} {
		mux.Handle(p, apiHandler)
	}
	mux.Handle("/", deskHandler)
	return mux
}

// deskURL is the address a person opens to reach the desk: the public URL
// when one is configured, else the listening address, reached through
// localhost when it listens on every interface.
func deskURL(publicURL, addr string) string {
	if publicURL != "" && publicURL != "http://"+addr {
		return strings.TrimSuffix(publicURL, "/") + "/desk"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/desk"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/desk"
}

// serve runs the API and the loops until ctx ends, then shuts down
// gracefully. What it opens closes in the reverse order: the loops, the
// database, tracing, the profiles' listener, the API's listener.
func serve(ctx context.Context, cfg config, stderr io.Writer) error {
	if p, set := tuneGC(os.Getenv); set {
		slog.Info("garbage collector target", "GOGC", p)
	}
	// Bind first, so that a taken port fails before anything else runs and
	// HANDOFF_ADDR=127.0.0.1:0 is logged (and linked) with the port it got.
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on HANDOFF_ADDR %s: %w", cfg.Addr, err)
	}
	defer ln.Close()
	stopPprof, err := startPprof(ctx, cfg.Pprof)
	if err != nil {
		return err
	}
	defer stopPprof()
	if cfg.SignIn.PublicURL == "http://"+cfg.Addr { // the default, made before the port was known
		cfg.SignIn.PublicURL = "http://" + ln.Addr().String()
	}
	shutdownTracing, err := setupTracing(ctx)
	if err != nil {
		return err
	}
	defer flushTracing(ctx, shutdownTracing)
	s, cards, err := openWithCards(ctx, cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	app, err := assemble(ctx, cfg, s, cards, shutdownTracing != nil)
	if err != nil {
		return err
	}
	return app.run(ctx, cfg, ln, stderr)
}

// startPprof serves the runtime profiles when addr names a listener; stop
// ends them. Without an address it starts nothing.
func startPprof(ctx context.Context, addr string) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	pctx, stop := context.WithCancel(ctx)
	if err := servePprof(pctx, addr); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}

// flushTracing sends the spans still buffered, within five seconds, when
// tracing was set up.
func flushTracing(ctx context.Context, shutdownTracing func(context.Context) error) {
	if shutdownTracing == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_ = shutdownTracing(sctx)
}

// openWithCards loads the cards, checks their signing secrets, opens the
// database and brings the cards' versions in it up to date, logging each
// operation type with the version it runs at.
func openWithCards(ctx context.Context, cfg config) (*store.Store, domain.Cards, error) {
	cards, err := cfg.loadCards()
	if err != nil {
		return nil, nil, err
	}
	if err := checkSigning(cards, os.Getenv, slog.Default()); err != nil {
		return nil, nil, err
	}
	s, err := store.Open(ctx, cfg.DatabaseURL, store.Writers(cfg.DBWriters))
	if err != nil {
		return nil, nil, err
	}
	versions, err := s.SyncCards(ctx, cards)
	if err == nil {
		err = recordCardsLoaded(ctx, s, versions)
	}
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	stampCards(cards, versions)
	for _, c := range cards.Sorted() {
		slog.Info("operation type", "name", c.Name, "version", versions[c.Name], "provider", c.Provider)
	}
	return s, cards, nil
}

// server is what serve runs: the database, the ledger over it, the API's
// tokens, the recovery metrics, the executor (nil without execute_adapter
// cards) and the HTTP server in front of the API and the desk.
type server struct {
	store    *store.Store
	ledger   *domain.Ledger
	tokens   *auth.Tokens
	recovery *api.Recovery
	executor *execute.Executor
	http     *http.Server
}

// assemble builds the ledger, the metrics, the executor and the two HTTP
// handlers over the open database.
func assemble(ctx context.Context, cfg config, s *store.Store, cards domain.Cards, tracing bool) (*server, error) {
	app := &server{store: s, ledger: newLedger(cfg, s, cards), tokens: auth.NewTokens(s)}
	app.tokens.CacheTTL = cfg.TokenCache
	signIn, people, err := cfg.SignIn.wire(ctx, cfg.Addr, s)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		groupCommitMetrics{read: s.GroupCommit})
	if app.recovery, err = api.NewRecovery(reg, s); err != nil {
		return nil, err
	}
	app.ledger.Observer, app.ledger.Workflow.Events = app.recovery, app.recovery
	if app.executor, err = newExecutor(app.ledger); err != nil {
		return nil, err
	}
	handler, err := app.handler(cfg, reg, signIn, people, tracing)
	if err != nil {
		return nil, err
	}
	app.http = &http.Server{Addr: cfg.Addr, Handler: handler,
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 2 * time.Minute}
	return app, nil
}

// newLedger is the ledger over the store, with the configured limits and
// the store's drill records.
func newLedger(cfg config, s *store.Store, cards domain.Cards) *domain.Ledger {
	ledger := domain.NewLedger(s, cards)
	ledger.Workflow.MaxCausationDepth = cfg.MaxCausationDepth
	ledger.Workflow.KeyPII = cfg.KeyPII
	ledger.Log = slog.Default()
	ledger.Drills.Reader = s
	ledger.Drills.Writer = s
	return ledger
}

// handler is the API and the desk behind one handler, with HSTS when the
// public URL is HTTPS.
func (app *server) handler(cfg config, reg *prometheus.Registry, signIn web.SignIn, people auth.Authenticator, tracing bool) (http.Handler, error) {
	var apiExecutor api.Executor
	if app.executor != nil {
		apiExecutor = app.executor
	}
	apiHandler, err := api.New(api.Config{Registry: reg, Executor: apiExecutor,
		// People is nil without OIDC: every JWT is then refused.
		Ledger: app.ledger, Auth: auth.Chain{Tokens: app.tokens, People: people}, Ready: app.store.Ping,
		BodyLimit: cfg.BodyLimit, TrustedProxies: cfg.TrustedProxies, Tracing: tracing,
	})
	if err != nil {
		return nil, err
	}
	deskHandler, err := web.New(web.Config{Ledger: app.ledger, TrustedProxies: cfg.TrustedProxies, SignIn: signIn})
	if err != nil {
		return nil, err
	}
	return withHSTS(routes(apiHandler, deskHandler), cfg.SignIn.PublicURL), nil
}

// run starts the loops, serves on ln until ctx ends and shuts down. The
// loops run on every replica; they stop after the HTTP server has
// finished, and the database closes (in serve) after them.
func (app *server) run(ctx context.Context, cfg config, ln net.Listener, stderr io.Writer) error {
	loopCtx, stopLoops := context.WithCancel(context.Background())
	var loops sync.WaitGroup
	defer func() { stopLoops(); loops.Wait() }()
	if app.executor != nil {
		defer app.executor.Wait() // the calls in flight settle before the database closes
	}
	if err := app.startLoops(loopCtx, &loops, cfg); err != nil {
		return err
	}
	app.hintFirstToken(ctx, cfg, stderr)
	bound := ln.Addr().String()
	slog.Info("handoff serving", "version", version, "addr", "http://"+bound, "desk", deskURL(cfg.SignIn.PublicURL, bound), "database", app.store.Dialect())

	errc := make(chan error, 1)
	go func() { errc <- app.http.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	app.shutdown(cfg.ShutdownTimeout)
	stopLoops()
	loops.Wait()
	slog.Info("stopped")
	return nil
}

// startLoops starts the time-driven loops: the sweeper, notification
// delivery, the lookups, the executor's retries, the token cache's watch,
// the audit trail's loops and content retention.
func (app *server) startLoops(loopCtx context.Context, loops *sync.WaitGroup, cfg config) error {
	ledger, s := app.ledger, app.store
	loops.Go(func() { (&reconcile.Sweeper{Ledger: ledger.Upkeep, Interval: cfg.SweepInterval}).Run(loopCtx) })
	// The Operations page's text search follows changes a moment later
	// (migration 00028); on SQLite it reads the operations themselves.
	loops.Go(func() { (&reconcile.SearchIndexer{Index: s}).Run(loopCtx) })
	deliverer := &reconcile.Deliverer{Store: s,
		Sender: notify.NewSender(notify.Sender{DeskBase: cfg.SignIn.PublicURL, Timeout: cfg.Notify.Timeout,
			AllowPrivate: cfg.Notify.AllowPrivate, Getenv: os.Getenv}),
		Policy: domain.DeliveryPolicy{Base: domain.DefaultDeliveryPolicy.Base, Max: domain.DefaultDeliveryPolicy.Max, MaxAge: cfg.Notify.MaxAge},
		Lease:  2*cfg.Notify.Timeout + 5*time.Second, Observe: app.recovery.ObserveDelivery}
	loops.Go(func() { deliverer.Run(loopCtx) })
	if err := startLookups(loopCtx, loops, ledger, s, app.recovery.ObserveLookup); err != nil {
		return err
	}
	startRetries(loopCtx, loops, ledger, app.executor)
	if cfg.TokenCache > 0 {
		loops.Go(func() { _ = app.tokens.Watch(loopCtx, s) }) // verified tokens are cached while this listens
	}
	if err := startAuditLoops(loopCtx, loops, s); err != nil {
		return err
	}
	if cfg.ContentRetention > 0 {
		slog.Info("content retention", "final_operations_keep_content", cfg.ContentRetention)
		loops.Go(func() {
			(&reconcile.ContentPurger{Ledger: ledger.Upkeep, Interval: time.Minute, Retention: cfg.ContentRetention}).Run(loopCtx)
		})
	}
	return nil
}

// hintFirstToken says how to create an API token when there is none yet:
// a log line in JSON, else a few lines on stderr.
func (app *server) hintFirstToken(ctx context.Context, cfg config, stderr io.Writer) {
	if list, err := app.tokens.List(ctx); err == nil && len(list) == 0 && cfg.LogFormat == "json" {
		slog.Info("no API tokens yet", "create_one_with", "handoff token create --namespace default --name my-workflow")
	} else if err == nil && len(list) == 0 {
		fmt.Fprintf(stderr, "No API tokens yet. Create one for a workflow with:\n"+
			"  handoff token create --namespace default --name my-workflow\n"+
			"(with the same HANDOFF_DATABASE_URL: %s)\n", redact(cfg.DatabaseURL))
	}
}

// shutdown stops accepting and lets the requests in flight finish within
// timeout (HANDOFF_SHUTDOWN_TIMEOUT), cutting off those still running.
// Leases held by workers are left to expire.
func (app *server) shutdown(timeout time.Duration) {
	slog.Info("shutting down", "timeout", timeout)
	shutdown, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := app.http.Shutdown(shutdown); err != nil {
		slog.Warn("requests still running at the shutdown timeout were cut off", "err", err)
		_ = app.http.Close()
	}
}
