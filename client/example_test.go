package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/opshandoff/handoff/api"
	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/cards"
	"github.com/opshandoff/handoff/client"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

// startHandoff runs a Handoff API in this process on a throwaway SQLite
// database with the bundled cards, and returns its URL and a workflow
// token — the examples' stand-in for `handoff serve` and `handoff token create`.
func startHandoff() (url, token string, stop func()) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "handoff-example")
	if err != nil {
		log.Fatal(err)
	}
	s, err := store.Open(ctx, "sqlite://"+filepath.Join(dir, "handoff.db"))
	if err != nil {
		log.Fatal(err)
	}
	cs, err := cards.Load("../cards/examples/cards.yaml")
	if err != nil {
		log.Fatal(err)
	}
	if _, err := s.SyncCards(ctx, cs); err != nil {
		log.Fatal(err)
	}
	tokens := auth.NewTokens(s)
	secret, _, err := tokens.Create(ctx, "campaigns", "example-worker")
	if err != nil {
		log.Fatal(err)
	}
	h, err := api.New(api.Config{Ledger: domain.NewLedger(s, cs), Auth: auth.Chain{Tokens: tokens},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	return srv.URL, secret, func() { srv.Close(); s.Close(); os.RemoveAll(dir) }
}

// Do runs the whole protocol around the one provider call: register and
// claim, begin, call, settle. The second Do with the same key gets the stored
// result back without calling the provider again.
func ExampleClient_Do() {
	url, token, stop := startHandoff()
	defer stop()
	c := client.New(url, token)
	ctx := context.Background()

	calls := 0
	createTask := func(ctx context.Context, claim client.Claim) (client.Result, error) {
		calls++ // send claim.ContentInto(...) to the CRM with claim.ProviderKey as its idempotency key
		return client.Result{Ref: "crm_123"}, nil
	}
	req := client.Request{Key: "evt_42:crm_task", Type: "crm.task.create", EventID: "evt_42",
		Content: map[string]any{"owner": "u_9", "due": "2026-12-01", "title": "Follow up"}}

	first, err := c.Do(ctx, req, createTask)
	if err != nil {
		log.Fatal(err)
	}
	again, err := c.Do(ctx, req, createTask) // a webhook redelivery, a retried job
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(first.State, first.Result.Ref)
	fmt.Println(again.State, again.Result.Ref)
	fmt.Println("provider calls:", calls)
	// Output:
	// completed crm_123
	// completed crm_123
	// provider calls: 1
}

// A timeout after begin is not a failure: the provider may have charged the
// card. Handoff settles it as unknown_outcome and hands it to a person; a
// later Do for the same key does not call the provider again.
func ExampleClient_Do_unknownOutcome() {
	url, token, stop := startHandoff()
	defer stop()
	c := client.New(url, token)
	ctx := context.Background()

	charge := func(ctx context.Context, claim client.Claim) (client.Result, error) {
		return client.Result{}, &client.ProviderError{Class: "timeout", Message: "read timeout"}
	}
	req := client.Request{Key: "ord_7:charge", Type: "payment.charge",
		Content: map[string]any{"order": "ord_7", "amount": 4200, "currency": "JPY"}}

	op, err := c.Do(ctx, req, charge)
	fmt.Println(op.State, err != nil)
	_, err = c.Do(ctx, req, charge)
	var p *client.Problem
	if errors.As(err, &p) {
		fmt.Println(p.Code, p.Reason)
	}
	// Output:
	// unknown_outcome true
	// not_claimable handed_off
}
