package store

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// cardRow is one version of an operation type's retry safety card.
type cardRow struct {
	Name       string `gorm:"column:name;primaryKey"`
	Version    int    `gorm:"column:version;primaryKey"`
	SHA256     string `gorm:"column:sha256"`
	Definition string
	LoadedAt   time.Time
}

func (cardRow) TableName() string { return "operation_types" }

// cardDefinition is the card as it is recorded: every field that changes
// what Handoff does or tells a person.
func cardDefinition(c domain.Card) []byte {
	classes := func(cs []domain.ErrorClass) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.String()
		}
		return out
	}
	def := map[string]any{
		"name": c.Name, "description": c.Description, "side_effect": c.SideEffect, "provider": c.Provider,
		"provider_idempotency": c.ProviderIdempotency.String(), "provider_key_retention": c.ProviderKeyRetention.String(),
		"lookup": c.Lookup.String(), "lookup_url": c.LookupURL, "lookup_authoritative": c.LookupAuthoritative,
		"requires_approval": c.RequiresApproval,
		"retry": map[string]any{"max_attempts": c.Retry.MaxAttempts, "max_elapsed": c.Retry.MaxElapsed.String(),
			"backoff": c.Retry.Backoff.String(), "backoff_max": c.Retry.BackoffMax.String()},
		"retryable": classes(c.Retryable), "terminal": classes(c.Terminal), "lease": c.Lease.String(),
		"owner": c.Owner, "notify_url": c.NotifyURL, "unverified": c.Unverified,
		"retry_layer": c.Retrier().String(), "reconciliation_owner": c.ReconciliationOwner, "id_rule": c.IDRule,
		"drill":    map[string]any{"adapter": c.Drill.Adapter, "idempotency": c.DrillIdempotency(), "lookup": c.DrillLookup()},
		"receipts": c.Receipts,
	}
	// Added later: present only when set, so that older cards keep their
	// recorded definition.
	dests := func(ds []domain.Destination) []map[string]string {
		out := make([]map[string]string, len(ds))
		for i, d := range ds {
			out[i] = map[string]string{"url": d.URL, "secret_env": d.SecretEnv, "format": d.Format}
			if d.Unsigned {
				out[i]["unsigned"] = "true"
			}
			if d.SeesHiddenContent {
				out[i]["sees_hidden_content"] = "true"
			}
			if d.Events != "" {
				out[i]["events"] = d.Events
			}
		}
		return out
	}
	if len(c.Notify) > 0 {
		def["notify"] = dests(c.Notify)
	}
	if c.EscalateAfter > 0 || len(c.Escalate) > 0 {
		def["escalate_after"], def["escalate"] = c.EscalateAfter.String(), dests(c.Escalate)
	}
	if c.NotifyIncludeData {
		def["notify_include_data"] = true
	}
	if c.ContentVisibleTo != (domain.Role{}) { // only when set: cards without it keep their versions
		def["content_visible_to"] = c.ContentVisibleTo.String()
	}
	for name, v := range map[string]string{"key_pattern": c.KeyPattern, "provider_concurrency": c.ProviderConcurrency} {
		if v != "" {
			def[name] = v
		}
	}
	if c.TwinsAllowed {
		def["twins"] = "allow"
	}
	if len(c.Identity) > 0 { // only when set, as content_visible_to
		def["identity"] = c.Identity
	}
	if c.Echo != nil {
		def["echo"] = map[string]string{"source": c.Echo.Source, "within": c.Echo.Within.String()}
	}
	b, _ := json.Marshal(def)
	canon, _ := domain.Canonicalize(b)
	return canon
}

// CardSHA256 is the hash of the card's recorded definition: what a drill
// receipt names, so a changed card is seen as not drilled.
func CardSHA256(c domain.Card) string { return domain.SHA256Hex(cardDefinition(c)) }

// SyncCards records a new version of every card whose definition changed
// since it was last loaded, and returns each card's current version. It is
// idempotent, and safe when replicas start together: on PostgreSQL they
// take turns under a transaction-scoped advisory lock (keyed by schema, like
// the system stream's), so the second reads what the first wrote instead of
// inserting the same version; SQLite's immediate transactions already take
// turns.
func (s *Store) SyncCards(ctx context.Context, cards domain.Cards) (map[string]int, error) {
	versions := map[string]int{}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := s.dialect.lock(tx, "handoff.cards:"); err != nil {
			return err
		}
		for _, c := range cards.Sorted() {
			def := cardDefinition(c)
			sum := domain.SHA256Hex(def)
			var last cardRow
			err := tx.Where("name = ?", c.Name).Order("version DESC").Limit(1).Find(&last).Error
			if err != nil {
				return err
			}
			if last.SHA256 == sum {
				versions[c.Name] = last.Version
				continue
			}
			row := cardRow{Name: c.Name, Version: last.Version + 1, SHA256: sum, Definition: string(def), LoadedAt: s.now().UTC()}
			if err := tx.Create(&row).Error; err != nil {
				return err
			}
			versions[c.Name] = row.Version
		}
		return nil
	})
	if err != nil {
		return nil, translate(err, "operation type")
	}
	return versions, nil
}
