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

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/notify"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/web"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
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
// gracefully.
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
	if cfg.Pprof != "" {
		pctx, stop := context.WithCancel(ctx)
		defer stop()
		if err := servePprof(pctx, cfg.Pprof); err != nil {
			return err
		}
	}
	bound := ln.Addr().String()
	if cfg.SignIn.PublicURL == "http://"+cfg.Addr { // the default, made before the port was known
		cfg.SignIn.PublicURL = "http://" + bound
	}
	shutdownTracing, err := setupTracing(ctx)
	if err != nil {
		return err
	}
	if shutdownTracing != nil {
		defer func() {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			_ = shutdownTracing(sctx)
		}()
	}
	cards, err := cfg.loadCards()
	if err != nil {
		return err
	}
	if err := checkSigning(cards, os.Getenv, slog.Default()); err != nil {
		return err
	}
	s, err := store.Open(ctx, cfg.DatabaseURL, store.Writers(cfg.DBWriters))
	if err != nil {
		return err
	}
	defer s.Close()
	versions, err := s.SyncCards(ctx, cards)
	if err != nil {
		return err
	}
	if err := recordCardsLoaded(ctx, s, versions); err != nil {
		return err
	}
	stampCards(cards, versions)
	for _, c := range cards.Sorted() {
		slog.Info("operation type", "name", c.Name, "version", versions[c.Name], "provider", c.Provider)
	}

	ledger := domain.NewLedger(s, cards)
	ledger.MaxCausationDepth = cfg.MaxCausationDepth
	ledger.KeyPII = cfg.KeyPII
	ledger.Log = slog.Default()
	ledger.Drills = s
	ledger.DrillLog = s
	tokens := auth.NewTokens(s)
	tokens.CacheTTL = cfg.TokenCache
	signIn, people, err := cfg.SignIn.wire(ctx, cfg.Addr, s)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		groupCommitMetrics{read: s.GroupCommit})
	recovery, err := api.NewRecovery(reg, s)
	if err != nil {
		return err
	}
	ledger.Observer, ledger.Events = recovery, recovery
	executor, err := newExecutor(ledger)
	if err != nil {
		return err
	}
	var apiExecutor api.Executor
	if executor != nil {
		apiExecutor = executor
	}
	apiHandler, err := api.New(api.Config{Registry: reg, Executor: apiExecutor,
		// People is nil without OIDC: every JWT is then refused.
		Ledger: ledger, Auth: auth.Chain{Tokens: tokens, People: people}, Ready: s.Ping,
		BodyLimit: cfg.BodyLimit, TrustedProxies: cfg.TrustedProxies, Tracing: shutdownTracing != nil,
	})
	if err != nil {
		return err
	}
	deskHandler, err := web.New(web.Config{Ledger: ledger, TrustedProxies: cfg.TrustedProxies, SignIn: signIn})
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: cfg.Addr, Handler: withHSTS(routes(apiHandler, deskHandler), cfg.SignIn.PublicURL),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 2 * time.Minute}

	// The loops run on every replica; they stop after the HTTP server has
	// finished, and the database closes (deferred above) after them.
	loopCtx, stopLoops := context.WithCancel(context.Background())
	var loops sync.WaitGroup
	defer func() { stopLoops(); loops.Wait() }()
	if executor != nil {
		defer executor.Wait() // the calls in flight settle before the database closes
	}
	loops.Go(func() { (&reconcile.Sweeper{Ledger: ledger, Interval: cfg.SweepInterval}).Run(loopCtx) })
	// The Operations page's text search follows changes a moment later
	// (migration 00028); on SQLite it reads the operations themselves.
	loops.Go(func() { (&reconcile.SearchIndexer{Index: s}).Run(loopCtx) })
	deliverer := &reconcile.Deliverer{Store: s,
		Sender: notify.NewSender(notify.Sender{DeskBase: cfg.SignIn.PublicURL, Timeout: cfg.Notify.Timeout,
			AllowPrivate: cfg.Notify.AllowPrivate, Getenv: os.Getenv}),
		Policy: domain.DeliveryPolicy{Base: domain.DefaultDeliveryPolicy.Base, Max: domain.DefaultDeliveryPolicy.Max, MaxAge: cfg.Notify.MaxAge},
		Lease:  2*cfg.Notify.Timeout + 5*time.Second, Observe: recovery.ObserveDelivery}
	loops.Go(func() { deliverer.Run(loopCtx) })
	if err := startLookups(loopCtx, &loops, ledger, s, recovery.ObserveLookup); err != nil {
		return err
	}
	startRetries(loopCtx, &loops, ledger, executor)
	if cfg.TokenCache > 0 {
		loops.Go(func() { _ = tokens.Watch(loopCtx, s) }) // verified tokens are cached while this listens
	}
	if err := startAuditLoops(loopCtx, &loops, s); err != nil {
		return err
	}
	if cfg.ContentRetention > 0 {
		slog.Info("content retention", "final_operations_keep_content", cfg.ContentRetention)
		loops.Go(func() {
			(&reconcile.ContentPurger{Ledger: ledger, Interval: time.Minute, Retention: cfg.ContentRetention}).Run(loopCtx)
		})
	}

	if list, err := tokens.List(ctx); err == nil && len(list) == 0 && cfg.LogFormat == "json" {
		slog.Info("no API tokens yet", "create_one_with", "handoff token create --namespace default --name my-workflow")
	} else if err == nil && len(list) == 0 {
		fmt.Fprintf(stderr, "No API tokens yet. Create one for a workflow with:\n"+
			"  handoff token create --namespace default --name my-workflow\n"+
			"(with the same HANDOFF_DATABASE_URL: %s)\n", redact(cfg.DatabaseURL))
	}
	slog.Info("handoff serving", "version", version, "addr", "http://"+bound, "desk", deskURL(cfg.SignIn.PublicURL, bound), "database", s.Dialect())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Graceful shutdown: stop accepting, let the requests in flight finish
	// within HANDOFF_SHUTDOWN_TIMEOUT, then stop the loops and close the
	// database. Leases held by workers are left to expire.
	slog.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	shutdown, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		slog.Warn("requests still running at the shutdown timeout were cut off", "err", err)
		_ = srv.Close()
	}
	stopLoops()
	loops.Wait()
	slog.Info("stopped")
	return nil
}
