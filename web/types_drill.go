package web

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// addDrills says on each card when its type was last drilled and whether
// the card as loaded now passed a drill.
func (s *server) addDrills(c *gin.Context, views []pages.CardView) error {
	sums, kept, err := s.ledger.Drills.Summaries(c.Request.Context())
	if err != nil || !kept {
		return err
	}
	for i := range views {
		card, _ := s.ledger.Cards.Get(views[i].Name)
		views[i].Drill = drillView(card, sums[card.Name])
	}
	return nil
}

func drillView(card domain.Card, sum domain.DrillSummary) pages.DrillView {
	if sum.Last.ID == "" {
		return pages.DrillView{Status: "not drilled", Why: "No drill has run for this type: run handoff drill --type " + card.Name + " before production."}
	}
	v := pages.DrillView{LastAt: sum.Last.RanAt.UTC().Format(time.DateTime + " UTC"), LastVerdict: sum.Last.Verdict,
		ReceiptURL: "/desk/drills/" + sum.Last.ID, ReceiptSHA256: sum.Last.SHA256}
	switch {
	case sum.Drilled(card):
		v.Status = "drilled"
	case sum.LastPass == nil:
		v.Status, v.Why = "not drilled", "No drill of this type has passed."
	default:
		v.Status, v.Why = "not drilled", fmt.Sprintf("The card changed since its last passing drill (card version %d then, %d now).", sum.LastPass.CardVersion, card.Version)
	}
	return v
}

// drillReceipt answers a stored drill receipt as it was written.
func (s *server) drillReceipt(c *gin.Context) {
	rec, raw, err := s.ledger.Drills.Receipt(c.Request.Context(), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Cache-Control", "no-store")
	c.Header("X-Receipt-SHA256", rec.SHA256)
	c.Data(http.StatusOK, "application/json; charset=utf-8", raw)
}

// addTemplateFields explains the rest of seed 003's card template: the
// retry layer, the reconciliation owner, the ID rule, the drill's adapter
// and where its receipts go.
func addTemplateFields(c domain.Card, add func(name, value, meaning string, warn bool)) {
	switch c.Retrier() {
	case domain.RetryByWorker:
		add("retry_layer", "worker", "The worker's SDK retries inside its lease; Handoff schedules no retry on top, or they would multiply: a failure the worker settles as retryable is final here (failed_terminal, worker_retries_exhausted) and comes to the desk.", false)
	case domain.RetryByNobody:
		add("retry_layer", "none", "Nobody retries automatically: every failure that would be retried comes to the desk (failed_terminal, no_automatic_retry), and Handoff never re-sends on its own, not even under a deduplicated provider key.", false)
	default:
		add("retry_layer", "handoff", "Handoff schedules every retry; workers and provider SDKs must not retry on their own, or the retries multiply.", false)
	}
	add("key_pattern", orDefault(c.KeyPattern, "none"), "A regular expression every key of this type must match; keys, event IDs and correlation IDs with an email address or a phone number are refused whatever it says (HANDOFF_KEY_PII).", false)
	if c.TwinsAllowed {
		add("twins", "allow", "The same content under another key runs even while an earlier one's outcome is open: identical content is normal for this type.", false)
	} else {
		add("twins", "hold", "The same content under another key waits for a person while an earlier one is "+statesText(domain.TwinStates)+": a new key is not an escape hatch.", false)
	}
	switch c.Concurrency() {
	case domain.ConcurrencySerialises:
		add("provider_concurrency", "serialises", "Concurrent requests under one provider key: the provider runs the first and answers the second with its result.", false)
	case domain.ConcurrencyRejects:
		add("provider_concurrency", "rejects", "Concurrent requests under one provider key: the provider refuses the second while the first runs (a conflict, safe to retry later).", false)
	default:
		add("provider_concurrency", "unknown", "Nobody has established what the provider does with concurrent requests under one key: two workers holding one key could both act. Handoff's lease keeps it to one.", true)
	}
	if why := c.AutoResendOff(); why != "" {
		add("automatic_resend", "off", "Handoff never re-sends automatically after the call began: "+why+". A doubt after begin always goes to a person.", true)
	}
	add("reconciliation_owner", orDefault(c.ReconciliationOwner, "nobody named"), "Who confirms at the provider what happened to an unknown outcome.", c.ReconciliationOwner == "")
	add("id_rule", orDefault(c.IDRule, "not written down"), "How the business key is made: the same intent always gets the same key, and a retry never a new one.", c.IDRule == "")
	if c.Drill.Adapter == domain.DrillAdapterSandbox {
		add("drill", fmt.Sprintf("sandbox (idempotency %s, lookup %s)", c.DrillIdempotency(), c.DrillLookup()),
			"handoff drill runs the seed cases for this type against a sandbox provider behaving like this, never the real one.", false)
	} else {
		add("drill", orDefault(c.Drill.Adapter, "no adapter"), "The drill only runs against a sandbox adapter: this type cannot be drilled as configured.", true)
	}
	add("receipts", orDefault(c.Receipts, "receipts"), "Where the drill writes its receipts (JSON and Markdown); each receipt's hash is in the audit trail.", false)
}

// statesText lists states in prose: "a, b or c".
func statesText(states []domain.State) string {
	names := make([]string, len(states))
	for i, st := range states {
		names[i] = st.String()
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
