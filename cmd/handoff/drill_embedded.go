package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store"
)

// The embedded Handoff the drill runs against when no --url is given: the
// real API, ledger and store, on loopback, with a workflow token and two
// people (an operator and an approver) known only to this process.

// Drill speed: an embedded Handoff shortens what the drill would otherwise
// wait for. The receipt's notes say so; the card's hash is the real card's.
const (
	drillBackoff    = 10 * time.Millisecond
	drillBackoffMax = 50 * time.Millisecond
	// Long enough that a re-send inside it is not outrun by a loaded
	// machine (the race detector, a CI runner), short enough to wait out.
	drillMaxRetention = 15 * time.Second
	// Long enough that a late call lands after the first lookup and
	// before the deadline (drill case 17), short enough to wait out.
	drillMaxCallTimeout = 10 * time.Second
)

type embeddedHandoff struct {
	URL                          string
	Namespace                    string // the workflow token's
	Workflow, Operator, Approver *client.Client
	Notes                        []string
	// LookupRoute points the lookups of a type with an adapter at the
	// drill's sandbox (drill_lookup.go).
	LookupRoute func(typ, sandboxURL string) bool
	// ExecuteRoute points the calls of a type with an execute_adapter at
	// the drill's sandbox (drill_execute.go).
	ExecuteRoute func(typ, sandboxURL string) bool
	close        func()
}

func (e *embeddedHandoff) Close() { e.close() }

// drillSpeedCards copies the cards with short backoffs and key retentions;
// versions and hashes stay those of the cards as written.
func drillSpeedCards(cards domain.Cards) (domain.Cards, []string) {
	out := domain.Cards{}
	for name, c := range cards {
		c.Retry.Backoff, c.Retry.BackoffMax = drillBackoff, drillBackoffMax
		if c.ProviderKeyRetention > drillMaxRetention {
			c.ProviderKeyRetention = drillMaxRetention
		}
		c.CallTimeout = min(c.CallTimeoutOrDefault(), drillMaxCallTimeout)
		out[name] = c
	}
	return out, []string{fmt.Sprintf("embedded Handoff at drill speed: retry backoff %s (max %s), provider key retention at most %s, for Handoff and the sandbox alike; call timeout at most %s",
		drillBackoff, drillBackoffMax, drillMaxRetention, drillMaxCallTimeout)}
}

// drillPeople authenticates the embedded Handoff's two people by secrets
// that exist only in this process.
type drillPeople map[string]domain.Actor

func (p drillPeople) Authenticate(_ context.Context, bearer string) (domain.Actor, error) {
	if a, ok := p[bearer]; ok {
		return a, nil
	}
	return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "unknown credentials")
}

// startEmbedded serves the API for cards on s, on a loopback port.
func startEmbedded(ctx context.Context, s *store.Store, cards domain.Cards) (*embeddedHandoff, error) {
	speed, notes := drillSpeedCards(cards)
	speed, lookups, lookupNotes, err := drillLookupCards(speed)
	if err != nil {
		return nil, err
	}
	notes = append(notes, lookupNotes...)
	speed, lookups.executes, lookupNotes, err = drillExecuteCards(speed, lookups)
	if err != nil {
		return nil, err
	}
	notes = append(notes, lookupNotes...)
	ledger := domain.NewLedger(s, speed)
	ledger.Drills.Reader, ledger.Drills.Writer = s, s // a drill --url against it records its receipts here
	tokens := auth.NewTokens(s)
	secret, _, err := tokens.Create(ctx, domain.DrillNamespace, "drill-"+hexToken(4))
	if err != nil {
		return nil, err
	}
	opSecret, apSecret := "drill-operator-"+hexToken(16), "drill-approver-"+hexToken(16)
	people := drillPeople{
		opSecret: {Kind: domain.ActorPerson, Name: "Drill Operator", Email: "drill-operator@handoff.invalid", Issuer: "handoff-drill", Subject: "drill-operator", Role: domain.RoleOperator},
		apSecret: {Kind: domain.ActorPerson, Name: "Drill Approver", Email: "drill-approver@handoff.invalid", Issuer: "handoff-drill", Subject: "drill-approver", Role: domain.RoleApprover},
	}
	sweepCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var executor api.Executor
	if x := startDrillExecutor(sweepCtx, ledger); x != nil {
		executor = x
	}
	h, err := api.New(api.Config{Ledger: ledger, Auth: auth.Chain{Tokens: tokens, People: people}, Ready: s.Ping, Logger: quiet,
		Executor: executor})
	if err != nil {
		stop()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		stop()
		return nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	go (&reconcile.Sweeper{Ledger: ledger.Upkeep, Interval: 250 * time.Millisecond, Log: quiet}).Run(sweepCtx)
	lookups.run(sweepCtx, ledger, s)
	url := "http://" + ln.Addr().String()
	return &embeddedHandoff{URL: url, Namespace: domain.DrillNamespace, Workflow: client.New(url, secret), Operator: client.New(url, opSecret),
		Approver: client.New(url, apSecret), Notes: notes, LookupRoute: lookups.Route, ExecuteRoute: lookups.RouteExecute,
		close: func() { stop(); _ = srv.Close(); lookups.Close() }}, nil
}

// quiet drops the embedded Handoff's request log: the receipt is the record.
var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func hexToken(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
