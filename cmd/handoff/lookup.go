package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/lookup"
	"github.com/opshandoff/handoff/reconcile"
	"github.com/opshandoff/handoff/store"
)

// lookupAllowPrivate reads HANDOFF_LOOKUP_ALLOW_PRIVATE: lookups may reach
// private and loopback addresses (a provider inside the network, or the
// sandbox); refused by default, as notifications are.
func lookupAllowPrivate(getenv func(string) string) (bool, error) {
	switch v := getenv("HANDOFF_LOOKUP_ALLOW_PRIVATE"); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, fmt.Errorf("HANDOFF_LOOKUP_ALLOW_PRIVATE: %q must be true or false", v)
	}
}

// startLookups runs the lookup loop when a card has an adapter.
func startLookups(ctx context.Context, loops *sync.WaitGroup, ledger *domain.Ledger, s *store.Store, observe func(string, domain.LookupTry)) error {
	types := ledger.Cards.LookupTypes()
	if len(types) == 0 {
		return nil
	}
	allow, err := lookupAllowPrivate(os.Getenv)
	if err != nil {
		return err
	}
	ledger.Desk.Looker = lookup.New(allow, os.Getenv) // the desk's "Look up now"
	l := &reconcile.Lookuper{Ledger: ledger.Upkeep, Store: s, Looker: ledger.Desk.Looker, Types: types, Observe: observe}
	loops.Go(func() { l.Run(ctx) })
	return nil
}

// lookupCmd runs a type's lookup adapter once for a key, as the reconciler
// would, and prints what it read: `handoff lookup TYPE KEY`.
func lookupCmd(ctx context.Context, cfg config, args []string, stdout io.Writer) error {
	op, err := parseLookupArgs(args)
	if err != nil {
		return err
	}
	cards, err := cfg.loadCards()
	if err != nil {
		return err
	}
	card, err := cards.Get(op.Type)
	if err != nil {
		return err
	}
	if card.LookupAdapter == nil {
		return fmt.Errorf("operation type %s has no lookup_adapter", op.Type)
	}
	if !json.Valid(op.Content) {
		return fmt.Errorf("lookup: --content is not JSON")
	}
	allow, err := lookupAllowPrivate(os.Getenv)
	if err != nil {
		return err
	}
	t := lookup.New(allow, os.Getenv).Look(ctx, *card.LookupAdapter, op)
	printLookup(stdout, t, card)
	return nil
}

// parseLookupArgs reads `handoff lookup TYPE KEY [flags]` as the operation
// the lookup is for.
func parseLookupArgs(args []string) (domain.Operation, error) {
	fs := flag.NewFlagSet("lookup", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	ns := fs.String("namespace", "default", "the operation's namespace (for its provider key)")
	providerKey := fs.String("provider-key", "", "the provider key (default: the one Handoff derives from namespace and key)")
	eventID := fs.String("event-id", "", "the event ID, for {event_id}")
	content := fs.String("content", "{}", "the content sent, as JSON, for {content.…} and found.compare")
	if len(args) < 2 || strings.HasPrefix(args[0], "-") || strings.HasPrefix(args[1], "-") {
		return domain.Operation{}, fmt.Errorf("usage: handoff lookup TYPE KEY [--namespace NS] [--provider-key K] [--event-id E] [--content JSON]")
	}
	typ, key := args[0], args[1]
	if err := fs.Parse(args[2:]); err != nil {
		return domain.Operation{}, fmt.Errorf("lookup: %w", err)
	}
	op := domain.Operation{Namespace: *ns, Key: key, Type: typ, EventID: *eventID, Content: json.RawMessage(*content),
		ProviderKey: *providerKey}
	if op.ProviderKey == "" {
		op.ProviderKey = domain.ProviderKeyFor(*ns, key)
	}
	return op, nil
}

// printLookup prints the request, what it read, and what the reconciler
// would do with that.
func printLookup(stdout io.Writer, t domain.LookupTry, card domain.Card) {
	fmt.Fprintf(stdout, "%s %s\n", t.Method, t.URL)
	fmt.Fprintf(stdout, "result:  %s\n", t.Summary())
	fmt.Fprintf(stdout, "latency: %s\n", time.Duration(t.LatencyMs)*time.Millisecond)
	switch {
	case t.Result == domain.LookupFoundDone:
		fmt.Fprintf(stdout, "would:   complete the operation with reference %s\n", t.Ref)
	case t.Result == domain.LookupNotFound && card.LookupAuthoritative:
		fmt.Fprintf(stdout, "would:   look again for %s, then retry under the same provider key\n", card.LookupAdapter.Window)
	case t.Result == domain.LookupConflict:
		fmt.Fprintln(stdout, "would:   hand it to a person at once: a record under the key with other content")
	default:
		fmt.Fprintf(stdout, "would:   look again for %s, then hand it to a person with the evidence\n", card.LookupAdapter.Window)
	}
}
