package web

import (
	"fmt"

	"github.com/opshandoff/handoff/domain"
)

// addTemplateFields explains the rest of seed 003's card template: the
// retry layer, the reconciliation owner, the ID rule, the drill's adapter
// and where its receipts go.
func addTemplateFields(c domain.Card, add func(name, value, meaning string, warn bool)) {
	if c.Retrier() == domain.RetryByWorker {
		add("retry_layer", "worker", "The worker retries inside its call to the provider; Handoff does not schedule retries on top, or they would multiply.", false)
	} else {
		add("retry_layer", "handoff", "Handoff schedules every retry; workers and provider SDKs must not retry on their own, or the retries multiply.", false)
	}
	add("reconciliation_owner", or(c.ReconciliationOwner, "nobody named"), "Who confirms at the provider what happened to an unknown outcome.", c.ReconciliationOwner == "")
	add("id_rule", or(c.IDRule, "not written down"), "How the business key is made: the same intent always gets the same key, and a retry never a new one.", c.IDRule == "")
	if c.Drill.Adapter == domain.DrillAdapterSandbox {
		add("drill", fmt.Sprintf("sandbox (idempotency %s, lookup %s)", c.DrillIdempotency(), c.DrillLookup()),
			"handoff drill runs the seed cases for this type against a sandbox provider behaving like this, never the real one.", false)
	} else {
		add("drill", or(c.Drill.Adapter, "no adapter"), "The drill only runs against a sandbox adapter: this type cannot be drilled as configured.", true)
	}
	add("receipts", or(c.Receipts, "receipts"), "Where the drill writes its receipts (JSON and Markdown); each receipt's hash is in the audit trail.", false)
}
