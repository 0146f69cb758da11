package api

// What the document says of each operation (by operationId) and tag beyond
// the route table's one-line summary: when to call it and what it refuses.
// A test fails when a route or tag has none.

var routeDescriptions = map[string]string{
	"whoami": "Answers who the credential is, as the server authenticated it: a workflow token's name and its one namespace, " +
		"or a person's issuer, subject and role. Clients check a token with it before they act (handoff drill --url refuses a token outside the drill namespace).",
	"recordDrillReceipt": "Records the receipt of a drill run against this Handoff (handoff drill --url): stored, shown on the Types page, " +
		"and its SHA-256 chained into the audit trail as a drill_recorded event. A workflow token or an admin.",
	"executeOperation": "For a tool that can only send one HTTP request (n8n, Zapier, Make, Shopify Flow, curl): registers the operation " +
		"under the key (the Idempotency-Key header, or a JSON pointer into the body as the card's execute_endpoint says), claims it as " +
		"Handoff's own worker, makes the call the card's execute_adapter describes and settles it. Authenticated by a bearer token, " +
		"or by the body's HMAC signature when the card asks for one (a wrong signature is 401 and records nothing). 200 with the " +
		"completed operation (Idempotent-Replayed: true when a completed key is asked again: the provider is not called); 202 with " +
		"Location while the call runs (at once with Prefer: respond-async, else after the card's wait) or a retry is scheduled; 409 " +
		"not_claimable with reason in_progress and Retry-After while another request runs the key, or with the state and the desk " +
		"page when a person must decide (unknown_outcome, failed_terminal, awaiting_approval); 422 when the key was registered with other content.",
	"registerOperation": "Registers one side-effecting operation under its stable key and content fingerprint. " +
		"201 for a new key; 200 with Idempotent-Replayed: true when the key exists with the same fingerprint (the stored result included once completed); " +
		"422 fingerprint_mismatch when it exists with other content. With claim, the operation is claimed in the same change when it is claimable " +
		"(one audit event: registered_and_claimed, or registered_and_began with begin): " +
		"the answer carries claim, or claim: null and claim_refused with the reason a claim would give. " +
		"A new operation with the type and identity (the content, or the fields the card's identity names) of one open under another key " +
		"is created awaiting_approval with last_error.code twin_unresolved; one whose caused_by chain loops, or an echo of our own effect " +
		"(from the card's echo source, with the identity of an operation completed within its window), is created failed_terminal " +
		"with last_error.code loop_detected, the original named.",
	"listOperations":     "Lists the caller's operations oldest first, filtered by the query; content is never included. Pages with next_cursor.",
	"getOperation":       "The operation with its current content. A workflow token sees only its namespace; another namespace answers 404.",
	"claimOperation":     "Grants the worker a fenced lease: the answer carries the lease token, the content snapshot to execute and the provider key. 409 not_claimable says why not (completed, in_progress, retry_later, awaiting_approval, handed_off, cancelled).",
	"claimNext":          "Claims up to limit ready operations of the given types (received, or failed_retryable whose next_retry_at has passed); two workers never receive the same one.",
	"heartbeat":          "Extends the lease of the lease holder; 409 stale_lease when the token is no longer current.",
	"beginOperation":     "Records, before the provider is called, that it is about to be: from here a lost worker means unknown_outcome, never a silent retry. Idempotent for the lease holder.",
	"settleOperation":    "Reports what the provider did. The server applies the type's retry safety card and may settle differently from what was asked (a terminal class, a timeout after begin, retries exhausted); the answer is the operation as settled. Idempotent: the same settle sent again after it committed (the same lease token, outcome, error class and code, result ref and data) is answered 200 with the operation as it is now and Idempotent-Replayed: true, and writes nothing; any other settle with a token that is no longer current is 409 stale_lease.",
	"reconcileOperation": "Reports a workflow's lookup at the provider for an operation in unknown_outcome: found completes it; not found retries it only when the card says lookups are authoritative and the last call's deadline (begin + call_timeout + the lookup window) has passed, otherwise the evidence is added for the person who decides (before the deadline the event says not_before).",
	"resolveOperation":   "A person's decision on a desk item: confirm_executed, confirm_not_executed (then retry or cancel), retry, cancel or resend_same_key, with a reason and the expected_version they saw. Never a workflow token (403).",
	"assignOperation":    "Assigns a desk item to a person, or unassigns it with null. Does not make other people's pending decisions stale.",
	"addNote":            "Adds a person's note to the operation's timeline.",
	"reviseContent":      "Replaces the content with a new version, which needs an approver's approval before it can run; from received, failed_retryable, failed_terminal or awaiting_approval only.",
	"approveContent":     "Approves a content version so the operation may run; refused (403) for the person who made that revision.",
	"rejectContent":      "Rejects a content version, cancelling the operation; refused (403) for the person who made that revision.",
	"decideBatch":        "Previews or applies one decision to many desk items; each item is applied on its own with its own expected_version, and one item's refusal never stops the others.",
	"listAttempts":       "Every attempt of the operation: worker, claimed, began and settled times, outcome and error.",
	"getTimeline":        "The operation's audit events in order, each with its actor, transition, detail and hash chain fields.",
	"registerEvent":      "Registers one operation per action under the key <event_id>:<action>. A redelivery returns the same operations (200, Idempotent-Replayed: true); a redelivery whose actions differ is refused like a fingerprint mismatch.",
	"getEvent":           "The event with each action's current operation, so a workflow resumes only the unfinished ones.",
	"listOperationTypes": "The operation types loaded from the cards: each type's retry safety card, read-only.",
	"getOperationType":   "One operation type's retry safety card.",
	"listIncidents":      "The incidents: the desk's unknown_outcome and failed_terminal items grouped by type and error class and code, kept with their triage (open, acknowledged, resolved, ignored), owner and counts; active ones first. Read-only; people triage on the desk. Never content.",
	"listAudit":          "The audit trail across operations in write order (with from or to, in time order), for people with a role; a workflow token sees its namespace's operations.",
	"exportAudit":        "Streams the audit trail with its chain fields, for offline verification with handoff audit verify; each export is itself audited.",
	"healthz":            "Liveness: the process is up. Does not touch the database.",
	"readyz":             "Readiness: 503 while the database does not answer or a migration is pending. Point balancers and readiness probes here.",
	"metrics":            "Prometheus metrics of the process.",
	"openapi":            "This OpenAPI 3.1 document, derived from the route table and the request and response shapes.",
}

var tagDescriptions = map[string]string{
	tagOps:     "Operations: register, read and search the ledger's side effects.",
	tagWorker:  "The worker protocol: claim, begin, call the provider, settle; fenced by the lease token.",
	tagHuman:   "Decisions and notes of people at the desk; never a workflow token.",
	tagEvents:  "Events that fan out into one operation per action.",
	tagTypes:   "Operation types: the retry safety cards the server applies.",
	tagService: "Health, readiness, metrics and this document.",
	tagAudit:   "The hash-chained audit trail.",
}
