package api

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// cardJSON is an operation type's retry safety card, read-only. notify_url
// is left out on purpose: webhook URLs often embed a secret, and every token
// holder may read the cards.
type cardJSON struct {
	Name                 string    `json:"name"`
	Description          string    `json:"description"`
	SideEffect           string    `json:"side_effect"`
	Provider             string    `json:"provider"`
	ProviderIdempotency  string    `json:"provider_idempotency" schema:"enum=idempotency"`
	ProviderKeyRetention string    `json:"provider_key_retention" doc:"a duration such as 24h; 0s when the provider does not deduplicate"`
	Lookup               string    `json:"lookup" schema:"enum=lookups"`
	LookupURL            *string   `json:"lookup_url"`
	LookupAuthoritative  bool      `json:"lookup_authoritative"`
	RequiresApproval     bool      `json:"requires_approval"`
	Retry                retryJSON `json:"retry"`
	Retryable            []string  `json:"retryable" schema:"items=classes"`
	Terminal             []string  `json:"terminal" schema:"items=classes"`
	Lease                string    `json:"lease"`
	CallTimeout          string    `json:"call_timeout" doc:"how long one provider call may take: the card's call_timeout, or twice the lease. No lookup concludes not-found before the last begin plus this, plus the lookup window"`
	Owner                *string   `json:"owner"`
	Unverified           []string  `json:"unverified"`
	RetryLayer           string    `json:"retry_layer" doc:"handoff, worker or none: the one layer that retries (none: nobody retries automatically)"`
	ReconciliationOwner  *string   `json:"reconciliation_owner"`
	IDRule               *string   `json:"id_rule" doc:"how the business key is made"`
	AutomaticResend      bool      `json:"automatic_resend" doc:"whether Handoff ever re-sends automatically after begin (under a deduplicated provider key, by the system's policy)"`
	AutomaticResendOff   *string   `json:"automatic_resend_off" doc:"why automatic re-sends after begin are off: retry layer, an unknown contract or an unverified statement about de-duplication"`
	Drill                drillJSON `json:"drill"`
	Receipts             *string   `json:"receipts" doc:"where drill receipts are written"`
	Version              int       `json:"version" doc:"the card's version as recorded in the database; 0 before it is recorded"`
	SHA256               string    `json:"sha256" doc:"hash of the recorded card; drill receipts name it"`

	LookupAdapter *lookupAdapterJSON `json:"lookup_adapter" doc:"how Handoff looks an unknown outcome up itself; null without one"`
	// ExecuteAdapter is in execute.go.
	ExecuteAdapter *executeAdapterJSON `json:"execute_adapter" doc:"how Handoff makes the provider call itself (POST /v1/execute/{type}); null without one"`

	KeyPattern          *string    `json:"key_pattern" doc:"a regular expression every key of the type must match; null for none"`
	Summary             []string   `json:"summary" doc:"JSON pointers into the content that the desk shows beside the key, where the viewer may see content"`
	Twins               string     `json:"twins" doc:"hold (the same content under another key waits for a person while one is open) or allow"`
	ProviderConcurrency string     `json:"provider_concurrency" doc:"serialises, rejects or unknown: what concurrent requests under one provider key do at the provider"`
	ContentVisibleTo    *string    `json:"content_visible_to" schema:"enum=roles,nullable" doc:"the lowest role that may read content and result data; null: everyone"`
	Notify              []destJSON `json:"notify" doc:"where notifications go (notify or notify_url), each without its URL's path"`
	EscalateAfter       *string    `json:"escalate_after" doc:"how long an unassigned item may stay unresolved before escalate is told; null for never"`
	Escalate            []destJSON `json:"escalate"`
	NotifyIncludeData   bool       `json:"notify_include_data" doc:"whether notifications carry content and result data"`
	Identity            []string   `json:"identity" doc:"JSON pointers into the content: the fields that make two contents one intent for the twin hold and the echo guard; empty: the whole content"`
	Echo                *echoJSON  `json:"echo" doc:"which registrations are echoes of our own effects, held failed_terminal with loop_detected; null without one"`
}

// destJSON is a notification destination as the API shows it: its host
// only, since a webhook URL often carries a secret in its path, and the
// secret's variable by name.
type destJSON struct {
	Host              string  `json:"host"`
	Format            string  `json:"format" doc:"standard or slack"`
	SecretEnv         *string `json:"secret_env" doc:"the variable holding the signing secret; never the secret"`
	Unsigned          bool    `json:"unsigned"`
	SeesHiddenContent bool    `json:"sees_hidden_content"`
}

func toDests(ds []domain.Destination) []destJSON {
	out := []destJSON{}
	for _, d := range ds {
		host := ""
		if u, err := url.Parse(d.URL); err == nil {
			host = u.Host
		}
		out = append(out, destJSON{Host: host, Format: d.Format, SecretEnv: nullIfEmpty(d.SecretEnv), Unsigned: d.Unsigned,
			SeesHiddenContent: d.SeesHiddenContent})
	}
	return out
}

// echoJSON is a card's echo guard.
type echoJSON struct {
	Source string `json:"source" doc:"the registration source that marks an echo"`
	Within string `json:"within" doc:"how long after the original completed a registration of its identity is an echo"`
}

func toEcho(e *domain.Echo) *echoJSON {
	if e == nil {
		return nil
	}
	return &echoJSON{Source: e.Source, Within: duration(e.Within)}
}

type drillJSON struct {
	Adapter     string `json:"adapter" doc:"the adapter the drill runs against; only sandbox is drilled"`
	Idempotency string `json:"idempotency" doc:"how the drill's sandbox deduplicates: none, key or key_and_params"`
	Lookup      string `json:"lookup" doc:"how the drill's sandbox answers lookups: none, authoritative or unsure"`
}

type retryJSON struct {
	MaxAttempts int    `json:"max_attempts"`
	MaxElapsed  string `json:"max_elapsed"`
	Backoff     string `json:"backoff"`
	BackoffMax  string `json:"backoff_max"`
}

func toCard(c domain.Card) cardJSON {
	return cardJSON{Name: c.Name, Description: c.Description, SideEffect: c.SideEffect, Provider: c.Provider,
		ProviderIdempotency: c.ProviderIdempotency.String(), ProviderKeyRetention: duration(c.ProviderKeyRetention),
		Lookup: c.Lookup.String(), LookupURL: nullIfEmpty(c.LookupURL), LookupAuthoritative: c.LookupAuthoritative,
		RequiresApproval: c.RequiresApproval,
		Retry: retryJSON{MaxAttempts: c.Retry.MaxAttempts, MaxElapsed: duration(c.Retry.MaxElapsed),
			Backoff: duration(c.Retry.Backoff), BackoffMax: duration(c.Retry.BackoffMax)},
		Retryable: classes(c.Retryable), Terminal: classes(c.Terminal), Lease: duration(c.Lease), CallTimeout: duration(c.CallTimeoutOrDefault()),
		Owner: nullIfEmpty(c.Owner), Unverified: append([]string{}, c.Unverified...),
		RetryLayer: c.Retrier().String(), ReconciliationOwner: nullIfEmpty(c.ReconciliationOwner), IDRule: nullIfEmpty(c.IDRule),
		AutomaticResend:    c.DedupesByKey() && c.AutoResendOff() == "" && c.Retrier() == domain.RetryByHandoff,
		AutomaticResendOff: nullIfEmpty(c.AutoResendOff()),
		Drill:              drillJSON{Adapter: c.Drill.Adapter, Idempotency: c.DrillIdempotency(), Lookup: c.DrillLookup()},
		Receipts:           nullIfEmpty(c.Receipts), Version: c.Version, SHA256: c.SHA256,
		LookupAdapter: toLookupAdapter(c.LookupAdapter), ExecuteAdapter: toExecuteAdapter(c),
		KeyPattern: nullIfEmpty(c.KeyPattern), Summary: nonNil(c.Summary), Twins: twins(c), ProviderConcurrency: c.Concurrency(),
		ContentVisibleTo: visibleTo(c), Notify: toDests(c.Destinations()), EscalateAfter: optDuration(c.EscalateAfter),
		Escalate: toDests(c.Escalate), NotifyIncludeData: c.NotifyIncludeData,
		Identity: append([]string{}, c.Identity...), Echo: toEcho(c.Echo)}
}

func twins(c domain.Card) string {
	if c.TwinsAllowed {
		return "allow"
	}
	return "hold"
}

func visibleTo(c domain.Card) *string {
	if c.ContentVisibleTo == (domain.Role{}) {
		return nil
	}
	return nullIfEmpty(c.ContentVisibleTo.String())
}

func optDuration(d time.Duration) *string {
	if d == 0 {
		return nil
	}
	return nullIfEmpty(duration(d))
}

func classes(cs []domain.ErrorClass) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.String())
	}
	return out
}

// duration writes durations as the cards are written: 24h, not 24h0m0s.
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

type cardList struct {
	Items []cardJSON `json:"items" schema:"required"`
}

func (s *server) listTypes(c *gin.Context) {
	out := cardList{Items: []cardJSON{}}
	for _, card := range s.ledger.Cards.Sorted() {
		out.Items = append(out.Items, toCard(card))
	}
	s.render(c, http.StatusOK, out)
}

func (s *server) getType(c *gin.Context) {
	card, err := s.ledger.Cards.Get(c.Param("name"))
	if err != nil { // a missing resource here is 404, not unknown_type's 422
		s.fail(c, domain.Errorf(domain.ENotFound, "no operation type named %q", c.Param("name")))
		return
	}
	s.render(c, http.StatusOK, toCard(card))
}

// nonNil is the list, an empty one for none: the schema says array.
func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
