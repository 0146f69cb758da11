// Command handoff-demo is the sample workflow of the Docker Compose demo
// profile. It registers realistic operations — CRM tasks, emails, coupons,
// card charges — and runs each through the Go client against a simulated
// provider that is slow, sometimes refuses, and sometimes times out after
// it has done the work, so the desk fills with items for a person to
// decide.
//
// It creates its own API token in the database HANDOFF_DATABASE_URL names
// (recorded in the audit trail like `handoff token create`), then calls the
// server at -url.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

// defaultDatabaseURL is the server's default (cmd/handoff's config).
const defaultDatabaseURL = "sqlite://handoff.db"

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "the Handoff server")
	every := flag.Duration("every", 2*time.Second, "pause between operations")
	count := flag.Int("count", 0, "operations to run; 0 runs until stopped")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "seed of the simulated provider's moods")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *url, *every, *count, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "handoff-demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url string, every time.Duration, count int, seed uint64) error {
	token, err := createToken(ctx, os.Getenv("HANDOFF_DATABASE_URL"))
	if err != nil {
		return err
	}
	c := client.New(url, token)
	rnd := rand.New(rand.NewPCG(seed, seed>>1))
	run := fmt.Sprintf("%x", seed&0xffffff)
	for i := 1; count == 0 || i <= count; i++ {
		req := sample(rnd, run, i)
		op, err := c.Do(ctx, req, provider(rnd))
		slog.Info("operation", "key", req.Key, "type", req.Type, "state", op.State, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(every):
		}
	}
	return nil
}

// createToken makes the demo's API token in namespace "demo", in the
// database the server uses: HANDOFF_DATABASE_URL, or the server's own
// default (./handoff.db) when it is not set, so that `go run ./cmd/handoff`
// and `go run ./cmd/handoff-demo` started in one folder find each other.
func createToken(ctx context.Context, dbURL string) (string, error) {
	if dbURL == "" {
		dbURL = defaultDatabaseURL
	}
	s, err := store.Open(ctx, dbURL)
	if err != nil {
		return "", err
	}
	defer s.Close()
	secret, tok, err := auth.NewTokens(s).Create(ctx, "demo", "sample-workflow-"+time.Now().UTC().Format("20060102-150405"))
	if err != nil {
		return "", err
	}
	_, err = s.AppendSystem(ctx, domain.SystemEvent(ctx, &domain.IDSource{}, time.Now(),
		domain.Actor{Kind: domain.ActorSystem, Name: "handoff-demo"}, "token_created", "",
		map[string]any{"token_id": tok.ID, "namespace": tok.Namespace, "name": tok.Name}))
	return secret, err
}

var customers = []string{"c_1042", "c_2203", "c_3381", "c_4410", "c_5127"}

// sample is the i-th business intent of this run.
func sample(rnd *rand.Rand, run string, i int) client.Request {
	cust := customers[rnd.IntN(len(customers))]
	event := fmt.Sprintf("evt_%s_%d", run, i)
	var typ string
	var content map[string]any
	switch rnd.IntN(4) {
	case 0:
		typ, content = "crm.task.create", map[string]any{"owner": "u_9", "account": cust, "title": "Call back about the renewal", "due": time.Now().AddDate(0, 0, 2).Format(time.DateOnly)}
	case 1:
		typ, content = "email.send", map[string]any{"to": cust + "@customers.example.com", "template": "order_shipped", "order": fmt.Sprintf("ord_%d", 5000+i)}
	case 2:
		typ, content = "coupon.issue", map[string]any{"customer": cust, "percent_off": 10 + 5*rnd.IntN(3), "reason": "late delivery"}
	default:
		typ, content = "payment.charge", map[string]any{"customer": cust, "amount_cents": 1000 + 100*rnd.IntN(90), "currency": "EUR"}
	}
	return client.Request{Key: event + ":" + typ, Type: typ, Content: content, EventID: event, Worker: "demo-worker"}
}

// provider simulates the far side: mostly fine, sometimes a transient
// refusal or a validation error, and sometimes the work is done but the
// answer never arrives — the case only a person can settle.
func provider(rnd *rand.Rand) func(context.Context, client.Claim) (client.Result, error) {
	roll := rnd.IntN(100)
	return func(ctx context.Context, claim client.Claim) (client.Result, error) {
		select {
		case <-ctx.Done():
			return client.Result{}, ctx.Err()
		case <-time.After(time.Duration(50+rnd.IntN(250)) * time.Millisecond):
		}
		switch {
		case roll < 25:
			return client.Result{}, errors.New("read timeout after the provider accepted the request")
		case roll < 35:
			return client.Result{}, &client.ProviderError{Class: "transient", Code: "503", Message: "provider busy"}
		case roll < 42:
			return client.Result{}, &client.ProviderError{Class: "validation", Code: "422", Message: "the provider refused the content"}
		}
		return client.Result{Ref: "sim_" + claim.ProviderKey[:min(12, len(claim.ProviderKey))]}, nil
	}
}
