package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/pages"
)

// types explains every operation type's retry safety card.
func (s *server) types(c *gin.Context) {
	v := pages.TypesView{Frame: s.frameFor(c, "Types", "types")}
	for _, card := range s.ledger.Cards.Sorted() {
		v.Cards = append(v.Cards, cardView(card))
	}
	if err := s.addDrills(c, v.Cards); err != nil {
		s.fail(c, err)
		return
	}
	page(c, http.StatusOK, pages.Types(v), pages.TypesBody(v))
}

// cardView explains each field of a card in words. Warn marks what the desk
// cannot count on: no deduplication, no lookup, a lookup whose "not found"
// proves nothing, nobody named to reconcile.
func cardView(c domain.Card) pages.CardView {
	v := pages.CardView{Name: c.Name, Description: c.Description, SideEffect: c.SideEffect, Provider: c.Provider,
		Owner: c.Owner, Unverified: c.Unverified}
	add := func(name, value, meaning string, warn bool) {
		v.Fields = append(v.Fields, pages.CardField{Name: name, Value: value, Meaning: meaning, Warn: warn})
	}
	add("side_effect", orDefault(c.SideEffect, "not described"), "What happens in the world when this runs once.", c.SideEffect == "")
	add("provider", orDefault(c.Provider, "unknown"), "The system that carries out the side effect.", false)
	switch c.ProviderIdempotency {
	case domain.IdempotencyKey:
		add("provider_idempotency", "key", "The provider deduplicates requests carrying the same idempotency key: a re-send with the same provider key does nothing new — it answers with the first request's stored result. A revised content therefore goes out under a new provider key, once the earlier send is known not to have executed.", false)
	case domain.IdempotencyKeyAndParams:
		add("provider_idempotency", "key_and_params", "The provider deduplicates requests with the same key and the same parameters, and refuses a re-send under the same key with changed parameters. A revised content therefore goes out under a new provider key, once the earlier send is known not to have executed.", false)
	case domain.IdempotencyUnknown:
		add("provider_idempotency", "unknown", "Nobody has established whether the provider deduplicates. An unknown contract is not a safe one: Handoff re-sends nothing automatically after the call began; a person decides.", true)
	default:
		add("provider_idempotency", "none", "The provider does not deduplicate: every re-send may do it again. A timeout after the call began needs a person.", true)
	}
	if !c.DedupesByKey() || c.ProviderKeyRetention <= 0 {
		add("provider_key_retention", "—", "No retention window: nothing protects a re-send.", c.ProviderIdempotency != domain.IdempotencyNone)
	} else {
		add("provider_key_retention", duration(c.ProviderKeyRetention), fmt.Sprintf("The provider remembers a key for %s after first seeing it; past that, a re-send is a new request.", duration(c.ProviderKeyRetention)), false)
	}
	switch c.Lookup {
	case domain.LookupAPI:
		add("lookup", "api", "A workflow can ask the provider whether the action happened.", false)
	case domain.LookupManual:
		add("lookup", "manual", "A person can look the provider key up in the provider's own tools.", false)
	default:
		add("lookup", "none", "Nobody can check at the provider whether it happened: an unknown outcome stays a judgement call.", true)
	}
	if c.LookupURL != "" {
		add("lookup_url", c.LookupURL, "Where the desk links to look the provider key up ({provider_key} is filled in).", false)
	}
	if c.LookupAuthoritative {
		add("lookup_authoritative", "true", "When a lookup finds nothing, that proves the action did not happen: it may be retried.", false)
	} else {
		add("lookup_authoritative", "false", "A lookup that finds nothing proves nothing (the record may appear late): a person decides.", c.Lookup != domain.LookupNone)
	}
	if c.RequiresApproval {
		add("requires_approval", "true", "Someone must approve the exact content before it runs, and approve again after every revision.", false)
	} else {
		add("requires_approval", "false", "Runs the registered content without approval; a revised content still needs one.", false)
	}
	r := c.Retry
	limit := "at most " + components.Plural(r.MaxAttempts, "attempt", "attempts")
	if r.MaxElapsed > 0 {
		limit += " within " + duration(r.MaxElapsed)
	}
	add("retry", limit, backoffSentence(r), false)
	add("retryable", classes(c.Retryable), "Errors worth retrying automatically.", false)
	add("terminal", classes(c.Terminal), "Errors that retrying cannot fix: the operation comes to the desk at once.", false)
	add("lease", duration(c.Lease), "How long a worker holds an operation before another may take it; a lease lost after the call began is an unknown outcome.", false)
	add("owner", orDefault(c.Owner, "nobody named"), "Who reconciles this type's desk items.", c.Owner == "")
	if c.NotifyURL != "" {
		add("notify_url", c.NotifyURL, "Where Handoff announces an item entering the desk.", false)
	}
	addNotify(c, add) // notifications.go
	addTemplateFields(c, add)
	return v
}

// orDefault is s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func classes(cs []domain.ErrorClass) string {
	if len(cs) == 0 {
		return "none"
	}
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.String()
	}
	return strings.Join(names, ", ")
}

// duration writes a card's duration as its YAML would: 24h, 30s, 5m.
func duration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// backoffSentence says what domain.Backoff does: before retry n it waits a
// random time up to backoff·2^(n-1), capped at backoff_max, and never less
// than the provider's Retry-After.
func backoffSentence(r domain.RetryPolicy) string {
	if r.MaxAttempts <= 1 {
		return "No automatic retry: after a failed attempt the operation comes to the desk."
	}
	s := fmt.Sprintf("Before each automatic retry Handoff waits a random time up to %s, a limit that doubles with each retry "+
		"up to %s, and never less than the provider's Retry-After. ", duration(r.Backoff), duration(r.BackoffMax))
	end := "after " + components.Plural(r.MaxAttempts, "attempt", "attempts")
	if r.MaxElapsed > 0 {
		end += ", or " + duration(r.MaxElapsed) + " after the first,"
	}
	return s + "A failure " + end + " comes to the desk."
}
