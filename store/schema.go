package store

import (
	"slices"
	"strings"
	"time"
)

// The hot tables' columns, each named once: its name, its SQL type, when it
// is written, and where its value lives in the table's row struct. The
// insert, update, select and scan lists of the hand-written SQL (the
// single statement, the multi-row statement, the pgx load, the audit
// stream) are derived from these tables, so a new column is one line here
// beside its field in the row struct; TestSchema_rowsMatchTables checks
// that every GORM row struct and its table name the same columns.

// colClass is when a column is written.
type colClass int

const (
	// identity columns are written once, when the row is inserted.
	identity colClass = iota
	// content columns of an operation change only with a content snapshot,
	// and are written only then.
	content
	// state columns may change with any change of the row.
	state
	// readOnly columns are read with the row and written elsewhere
	// (content_purged_at by PurgeContent, an audit event's pos by its
	// sequence).
	readOnly
)

// column is one column of a table whose rows are R: field returns a pointer
// to its field in a row, what a scan fills and a write reads.
type column[R any] struct {
	name, typ string
	class     colClass
	field     func(*R) any
}

// col is one column with a value to write: its name, SQL type and value.
type col struct {
	name, typ string
	v         any
}

// opTable is the operations table, in opColumns' order.
var opTable = []column[operationRow]{
	{"id", "text", identity, func(r *operationRow) any { return &r.ID }},
	{"namespace", "text", identity, func(r *operationRow) any { return &r.Namespace }},
	{"key", "text", identity, func(r *operationRow) any { return &r.Key }},
	{"type", "text", identity, func(r *operationRow) any { return &r.Type }},
	{"state", "text", state, func(r *operationRow) any { return &r.State }},
	{"version", "bigint", state, func(r *operationRow) any { return &r.Version }},
	{"event_id", "text", identity, func(r *operationRow) any { return &r.EventID }},
	{"source", "text", identity, func(r *operationRow) any { return &r.Source }},
	{"correlation_id", "text", identity, func(r *operationRow) any { return &r.CorrelationID }},
	{"caused_by", "text", identity, func(r *operationRow) any { return &r.CausedBy }},
	{"supersedes", "text", identity, func(r *operationRow) any { return &r.Supersedes }},
	{"superseded_by", "text", state, func(r *operationRow) any { return &r.SupersededBy }},
	{"fingerprint", "text", identity, func(r *operationRow) any { return &r.Fingerprint }},
	{"identity_hash", "text", identity, func(r *operationRow) any { return &r.IdentityHash }},
	{"content_version", "integer", content, func(r *operationRow) any { return &r.ContentVersion }},
	{"content_sha256", "text", content, func(r *operationRow) any { return &r.ContentSHA256 }},
	{"content", "text", content, func(r *operationRow) any { return &r.Content }},
	{"content_author", "text", content, func(r *operationRow) any { return &r.ContentAuthor }},
	{"approval_version", "integer", state, func(r *operationRow) any { return &r.ApprovalVersion }},
	{"approval_by", "text", state, func(r *operationRow) any { return &r.ApprovalBy }},
	{"approval_at", "timestamptz", state, func(r *operationRow) any { return &r.ApprovalAt }},
	{"provider_key", "text", state, func(r *operationRow) any { return &r.ProviderKey }},
	{"provider_key_first_sent_at", "timestamptz", state, func(r *operationRow) any { return &r.ProviderKeyFirstSentAt }},
	{"attempts", "integer", state, func(r *operationRow) any { return &r.Attempts }},
	{"retry_from", "integer", state, func(r *operationRow) any { return &r.RetryFrom }},
	{"first_attempt_at", "timestamptz", state, func(r *operationRow) any { return &r.FirstAttemptAt }},
	{"lease_token", "bigint", state, func(r *operationRow) any { return &r.LeaseToken }},
	{"lease_worker", "text", state, func(r *operationRow) any { return &r.LeaseWorker }},
	{"lease_expires_at", "timestamptz", state, func(r *operationRow) any { return &r.LeaseExpiresAt }},
	{"next_retry_at", "timestamptz", state, func(r *operationRow) any { return &r.NextRetryAt }},
	{"result_ref", "text", state, func(r *operationRow) any { return &r.ResultRef }},
	{"result_data", "text", state, func(r *operationRow) any { return &r.ResultData }},
	{"last_error_class", "text", state, func(r *operationRow) any { return &r.LastErrorClass }},
	{"last_error_code", "text", state, func(r *operationRow) any { return &r.LastErrorCode }},
	{"last_error_message", "text", state, func(r *operationRow) any { return &r.LastErrorMessage }},
	{"assignee", "text", state, func(r *operationRow) any { return &r.Assignee }},
	{"resolution_action", "text", state, func(r *operationRow) any { return &r.ResolutionAction }},
	{"resolution_by", "text", state, func(r *operationRow) any { return &r.ResolutionBy }},
	{"resolution_reason", "text", state, func(r *operationRow) any { return &r.ResolutionReason }},
	{"resolution_at", "timestamptz", state, func(r *operationRow) any { return &r.ResolutionAt }},
	{"audit_head", "text", state, func(r *operationRow) any { return &r.AuditHead }},
	{"created_at", "timestamptz", identity, func(r *operationRow) any { return &r.CreatedAt }},
	{"updated_at", "timestamptz", state, func(r *operationRow) any { return &r.UpdatedAt }},
	{"desk_entered_at", "timestamptz", state, func(r *operationRow) any { return &r.DeskEnteredAt }},
	{"assigned_at", "timestamptz", state, func(r *operationRow) any { return &r.AssignedAt }},
	{"escalated_at", "timestamptz", state, func(r *operationRow) any { return &r.EscalatedAt }},
	{"assignee_issuer", "text", state, func(r *operationRow) any { return &r.AssigneeIssuer }},
	{"assignee_subject", "text", state, func(r *operationRow) any { return &r.AssigneeSubject }},
	{"content_purged_at", "timestamptz", readOnly, func(r *operationRow) any { return &r.ContentPurgedAt }},
	{"provider_key_content_version", "integer", state, func(r *operationRow) any { return &r.ProviderKeyContentVersion }},
}

// auditTable is the audit_events table, in auditColumns' order.
var auditTable = []column[auditRow]{
	{"pos", "bigint", readOnly, func(r *auditRow) any { return &r.Pos }},
	{"id", "text", identity, func(r *auditRow) any { return &r.ID }},
	{"stream", "text", identity, func(r *auditRow) any { return &r.Stream }},
	{"seq", "bigint", identity, func(r *auditRow) any { return &r.Seq }},
	{"operation_id", "text", identity, func(r *auditRow) any { return &r.OperationID }},
	{"namespace", "text", identity, func(r *auditRow) any { return &r.Namespace }},
	{"at", "timestamptz", identity, func(r *auditRow) any { return &r.At }},
	{"actor_kind", "text", identity, func(r *auditRow) any { return &r.ActorKind }},
	{"actor_name", "text", identity, func(r *auditRow) any { return &r.ActorName }},
	{"actor_namespace", "text", identity, func(r *auditRow) any { return &r.ActorNamespace }},
	{"actor_issuer", "text", identity, func(r *auditRow) any { return &r.ActorIssuer }},
	{"actor_subject", "text", identity, func(r *auditRow) any { return &r.ActorSubject }},
	{"actor_email", "text", identity, func(r *auditRow) any { return &r.ActorEmail }},
	{"actor_role", "text", identity, func(r *auditRow) any { return &r.ActorRole }},
	{"action", "text", identity, func(r *auditRow) any { return &r.Action }},
	{"from_state", "text", identity, func(r *auditRow) any { return &r.FromState }},
	{"to_state", "text", identity, func(r *auditRow) any { return &r.ToState }},
	{"reason", "text", identity, func(r *auditRow) any { return &r.Reason }},
	{"detail", "text", identity, func(r *auditRow) any { return &r.Detail }},
	{"request_id", "text", identity, func(r *auditRow) any { return &r.RequestID }},
	{"client_addr", "text", identity, func(r *auditRow) any { return &r.ClientAddr }},
	{"prev_hash", "text", identity, func(r *auditRow) any { return &r.PrevHash }},
	{"hash", "text", identity, func(r *auditRow) any { return &r.Hash }},
}

// attemptTable is the attempts table: what a claim inserts, and what its
// begin and its settle set later (the rule is attemptPlan's).
var attemptTable = []column[attemptRow]{
	{"id", "text", identity, func(r *attemptRow) any { return &r.ID }},
	{"operation_id", "text", identity, func(r *attemptRow) any { return &r.OperationID }},
	{"number", "integer", identity, func(r *attemptRow) any { return &r.Number }},
	{"worker", "text", identity, func(r *attemptRow) any { return &r.Worker }},
	{"lease_token", "bigint", identity, func(r *attemptRow) any { return &r.LeaseToken }},
	{"claimed_at", "timestamptz", identity, func(r *attemptRow) any { return &r.ClaimedAt }},
	{"began_at", "timestamptz", state, func(r *attemptRow) any { return &r.BeganAt }},
	{"settled_at", "timestamptz", state, func(r *attemptRow) any { return &r.SettledAt }},
	{"outcome", "text", state, func(r *attemptRow) any { return &r.Outcome }},
	{"error_class", "text", state, func(r *attemptRow) any { return &r.ErrorClass }},
	{"error_code", "text", state, func(r *attemptRow) any { return &r.ErrorCode }},
	{"error_message", "text", state, func(r *attemptRow) any { return &r.ErrorMessage }},
	{"settle_sha256", "text", state, func(r *attemptRow) any { return &r.SettleSHA256 }},
}

// contentTable is the content_versions table: what a revision inserts
// (identity), and its approval or rejection, set later (state).
var contentTable = []column[contentRow]{
	{"operation_id", "text", identity, func(r *contentRow) any { return &r.OperationID }},
	{"version", "integer", identity, func(r *contentRow) any { return &r.Version }},
	{"content", "text", identity, func(r *contentRow) any { return &r.Content }},
	{"sha256", "text", identity, func(r *contentRow) any { return &r.SHA256 }},
	{"created_by", "text", identity, func(r *contentRow) any { return &r.CreatedBy }},
	{"created_by_issuer", "text", identity, func(r *contentRow) any { return &r.CreatedByIssuer }},
	{"created_by_subject", "text", identity, func(r *contentRow) any { return &r.CreatedBySubject }},
	{"created_at", "timestamptz", identity, func(r *contentRow) any { return &r.CreatedAt }},
	{"reason", "text", identity, func(r *contentRow) any { return &r.Reason }},
	{"approved_by", "text", state, func(r *contentRow) any { return &r.ApprovedBy }},
	{"approved_at", "timestamptz", state, func(r *contentRow) any { return &r.ApprovedAt }},
	{"rejected_by", "text", state, func(r *contentRow) any { return &r.RejectedBy }},
	{"rejected_at", "timestamptz", state, func(r *contentRow) any { return &r.RejectedAt }},
}

// outboxTable is the notifications table (the outbox): a change inserts
// its rows whole; the delivery worker sets the rest (notification.go).
var outboxTable = []column[notificationRow]{
	{"id", "text", identity, func(r *notificationRow) any { return &r.ID }},
	{"operation_id", "text", identity, func(r *notificationRow) any { return &r.OperationID }},
	{"namespace", "text", identity, func(r *notificationRow) any { return &r.Namespace }},
	{"op_type", "text", identity, func(r *notificationRow) any { return &r.OpType }},
	{"type", "text", identity, func(r *notificationRow) any { return &r.Type }},
	{"url", "text", identity, func(r *notificationRow) any { return &r.URL }},
	{"secret_env", "text", identity, func(r *notificationRow) any { return &r.SecretEnv }},
	{"format", "text", identity, func(r *notificationRow) any { return &r.Format }},
	{"summary", "text", identity, func(r *notificationRow) any { return &r.Summary }},
	{"created_at", "timestamptz", identity, func(r *notificationRow) any { return &r.CreatedAt }},
	{"status", "text", state, func(r *notificationRow) any { return &r.Status }},
	{"attempts", "integer", state, func(r *notificationRow) any { return &r.Attempts }},
	{"next_attempt_at", "timestamptz", state, func(r *notificationRow) any { return &r.NextAttemptAt }},
	{"claim_token", "bigint", state, func(r *notificationRow) any { return &r.ClaimToken }},
	{"delivered_at", "timestamptz", state, func(r *notificationRow) any { return &r.DeliveredAt }},
	{"last_status", "integer", state, func(r *notificationRow) any { return &r.LastStatus }},
	{"last_error", "text", state, func(r *notificationRow) any { return &r.LastError }},
}

// The lists the SQL is built from.
var (
	// opColumns are every column of operations, in scanTargets' order.
	opColumns = columnNames(opTable, identity, content, state, readOnly)
	// opGenerated are operations' generated columns (migration 00029):
	// the database computes them from state, last_error_code and
	// result_ref, and the partial indexes' predicates name them. Nothing
	// writes or scans them.
	opGenerated = []string{"queued", "desk_state", "desk_result_ref", "twin_held"}
	// auditColumns are every column of audit_events, in scanTargets' order.
	auditColumns = columnNames(auditTable, identity, readOnly)
	// auditInsertColumns are what an insert writes (pos is the sequence's).
	auditInsertColumns = columnNames(auditTable, identity)
)

// columnNames is the table's columns of the classes, comma separated.
func columnNames[R any](t []column[R], classes ...colClass) string {
	var names []string
	for _, c := range t {
		for _, k := range classes {
			if c.class == k {
				names = append(names, c.name)
				break
			}
		}
	}
	return strings.Join(names, ", ")
}

// colsOf is r's values of the table's columns of the classes, in the
// table's order.
func colsOf[R any](t []column[R], r *R, classes ...colClass) []col {
	n := 0
	for _, c := range t {
		if slices.Contains(classes, c.class) {
			n++
		}
	}
	return appendCols(make([]col, 0, n), t, r, classes...)
}

// appendCols is colsOf appended to dst, for a row whose first columns are
// not the table's (the multi-row statement's "of").
func appendCols[R any](dst []col, t []column[R], r *R, classes ...colClass) []col {
	for _, c := range t {
		if slices.Contains(classes, c.class) {
			dst = append(dst, col{c.name, c.typ, valueOf(c.field(r))})
		}
	}
	return dst
}

// pick is r's values of the named columns, in the order named.
func pick[R any](t []column[R], r *R, names ...string) []col {
	out := make([]col, 0, len(names))
	for _, n := range names {
		for _, c := range t {
			if c.name == n {
				out = append(out, col{c.name, c.typ, valueOf(c.field(r))})
				break
			}
		}
	}
	return out
}

// scanTargets are the pointers a scan of every column fills, in the
// table's order.
func scanTargets[R any](t []column[R], r *R) []any {
	out := make([]any, len(t), len(t)+1)
	for i, c := range t {
		out[i] = c.field(r)
	}
	return out
}

// valueOf is the value a field pointer points at: what a write sends.
func valueOf(p any) any {
	switch x := p.(type) {
	case *string:
		return *x
	case **string:
		return *x
	case *int:
		return *x
	case **int:
		return *x
	case *int64:
		return *x
	case *time.Time:
		return *x
	case **time.Time:
		return *x
	}
	panic("schema: no value form for a column's field") // a field type added without its case here
}
