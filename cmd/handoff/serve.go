package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
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

// serve runs the API and the sweeper until ctx ends, then shuts down
// gracefully.
func serve(ctx context.Context, cfg config, stderr io.Writer) error {
	cards, err := cfg.loadCards()
	if err != nil {
		return err
	}
	s, err := store.Open(ctx, cfg.DatabaseURL)
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
	for _, c := range cards.Sorted() {
		slog.Info("operation type", "name", c.Name, "version", versions[c.Name], "provider", c.Provider)
	}

	ledger := domain.NewLedger(s, cards)
	ledger.MaxCausationDepth = cfg.MaxCausationDepth
	tokens := auth.NewTokens(s)
	signIn, people, err := cfg.SignIn.wire(ctx, cfg.Addr, s)
	if err != nil {
		return err
	}
	apiHandler, err := api.New(api.Config{
		// People is nil without OIDC: every JWT is then refused.
		Ledger: ledger, Auth: auth.Chain{Tokens: tokens, People: people}, Ready: s.Ping,
		BodyLimit: cfg.BodyLimit, TrustedProxies: cfg.TrustedProxies,
	})
	if err != nil {
		return err
	}
	deskHandler, err := web.New(web.Config{Ledger: ledger, TrustedProxies: cfg.TrustedProxies, SignIn: signIn})
	if err != nil {
		return err
	}
	srv := &http.Server{Addr: cfg.Addr, Handler: routes(apiHandler, deskHandler),
		ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, WriteTimeout: 60 * time.Second,
		IdleTimeout: 2 * time.Minute}

	sweepCtx, stopSweep := context.WithCancel(ctx)
	defer stopSweep()
	go (&reconcile.Sweeper{Ledger: ledger, Interval: cfg.SweepInterval}).Run(sweepCtx)
	go func() { _ = tokens.Watch(sweepCtx, s) }() // verified tokens are cached while this listens
	if err := startAuditLoops(sweepCtx, s); err != nil {
		return err
	}

	if list, err := tokens.List(ctx); err == nil && len(list) == 0 {
		fmt.Fprintf(stderr, "No API tokens yet. Create one for a workflow with:\n"+
			"  handoff token create --namespace default --name my-workflow\n"+
			"(with the same HANDOFF_DATABASE_URL: %s)\n", redact(cfg.DatabaseURL))
	}
	slog.Info("handoff serving", "addr", "http://"+cfg.Addr, "database", s.Dialect())

	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
