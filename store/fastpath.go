package store

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/opshandoff/handoff/domain"
)

// The hot path on PostgreSQL: one domain.Change is one statement — the
// compare-and-set of the operation, its attempt, its new content snapshot
// and its audit events in one data-modifying CTE, sent through pgx without
// GORM. One statement is one round trip and, outside a transaction, one
// commit; it is atomic like the transaction it replaces. Everything else
// (SQLite, the cold paths, changes with parts this path does not write)
// goes through GORM.

// fastPathEligible is the one place that decides whether a change may take
// the single-statement path. It must refuse every change carrying a part
// that path does not write: a supersede link, a content approval or
// rejection, notifications (the outbox rows), and anything added to
// domain.Change later. Operation columns added later must be added to
// opStateCols, or a fast write would leave them as they were.
func fastPathEligible(ch domain.Change) bool {
	return ch.Superseded == nil && !ch.Unchanged && len(ch.Notifications) == 0 &&
		(ch.Content == nil || ch.Content.New)
}

// openPool opens the pgx pool the fast path writes through.
func openPool(rawURL string, size int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = size
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

// stmt is a statement under construction: SQL and its arguments.
type stmt struct {
	sql  strings.Builder
	args []any
}

// arg adds a parameter and returns its placeholder, cast to the type.
func (s *stmt) arg(v any, typ string) string {
	s.args = append(s.args, v)
	return "$" + strconv.Itoa(len(s.args)) + "::" + typ
}

// col is one column the fast path writes: its name, SQL type and value.
type col struct {
	name, typ string
	v         any
}

// opStateCols are the operation's columns a transition may change; the
// content columns change only with a content snapshot, and are written only
// then (see opContentCols).
func opStateCols(r *operationRow) []col {
	return []col{
		{"state", "text", r.State}, {"version", "bigint", r.Version}, {"superseded_by", "text", r.SupersededBy},
		{"approval_version", "integer", r.ApprovalVersion}, {"approval_by", "text", r.ApprovalBy},
		{"approval_at", "timestamptz", r.ApprovalAt}, {"provider_key", "text", r.ProviderKey},
		{"provider_key_first_sent_at", "timestamptz", r.ProviderKeyFirstSentAt}, {"attempts", "integer", r.Attempts},
		{"retry_from", "integer", r.RetryFrom}, {"first_attempt_at", "timestamptz", r.FirstAttemptAt},
		{"lease_token", "bigint", r.LeaseToken}, {"lease_worker", "text", r.LeaseWorker},
		{"lease_expires_at", "timestamptz", r.LeaseExpiresAt}, {"next_retry_at", "timestamptz", r.NextRetryAt},
		{"result_ref", "text", r.ResultRef}, {"result_data", "text", r.ResultData},
		{"last_error_class", "text", r.LastErrorClass}, {"last_error_code", "text", r.LastErrorCode},
		{"last_error_message", "text", r.LastErrorMessage}, {"assignee", "text", r.Assignee},
		{"resolution_action", "text", r.ResolutionAction}, {"resolution_by", "text", r.ResolutionBy},
		{"resolution_reason", "text", r.ResolutionReason}, {"resolution_at", "timestamptz", r.ResolutionAt},
		{"audit_head", "text", r.AuditHead}, {"updated_at", "timestamptz", r.UpdatedAt},
		{"desk_entered_at", "timestamptz", r.DeskEnteredAt}, {"assigned_at", "timestamptz", r.AssignedAt},
		{"escalated_at", "timestamptz", r.EscalatedAt},
		{"assignee_issuer", "text", r.AssigneeIssuer}, {"assignee_subject", "text", r.AssigneeSubject},
		{"provider_key_content_version", "integer", r.ProviderKeyContentVersion},
	}
}

// stateColsToWrite are the state columns an update writes: those whose
// value differs from the operation the change was decided on
// (domain.Change.Before), or all of them without it. A begin changes six of
// the thirty-two; sending, binding and setting only those cut PostgreSQL's
// and the server's CPU per lifecycle by about an eighth each (measured at 16
// clients on 2 cores). The compare-and-set on the version still guards the
// whole row: a column not written holds what the change was decided on.
func stateColsToWrite(ch domain.Change, after *operationRow) []col {
	all := opStateCols(after)
	if ch.Before == nil {
		return all
	}
	prev := toOperationRow(*ch.Before)
	old := opStateCols(&prev)
	out := make([]col, 0, len(all))
	for i, c := range all {
		if !sameValue(c.v, old[i].v) {
			out = append(out, c)
		}
	}
	return out
}

// sameValue reports whether two values of one column are equal. A type it
// does not know is never the same: writing a value again is harmless,
// leaving a changed one unwritten is not.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	case int:
		y, ok := b.(int)
		return ok && x == y
	case *string:
		y, ok := b.(*string)
		return ok && (x == nil) == (y == nil) && (x == nil || *x == *y)
	case *int:
		y, ok := b.(*int)
		return ok && (x == nil) == (y == nil) && (x == nil || *x == *y)
	case *time.Time:
		y, ok := b.(*time.Time)
		return ok && (x == nil) == (y == nil) && (x == nil || x.Equal(*y))
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	}
	return false
}

func opContentCols(r *operationRow) []col {
	return []col{{"content_version", "integer", r.ContentVersion}, {"content_sha256", "text", r.ContentSHA256},
		{"content", "text", r.Content}, {"content_author", "text", r.ContentAuthor}}
}

// opIdentityCols never change after the operation is created.
func opIdentityCols(r *operationRow) []col {
	return []col{{"id", "text", r.ID}, {"namespace", "text", r.Namespace}, {"key", "text", r.Key},
		{"type", "text", r.Type}, {"event_id", "text", r.EventID}, {"source", "text", r.Source},
		{"correlation_id", "text", r.CorrelationID}, {"caused_by", "text", r.CausedBy},
		{"supersedes", "text", r.Supersedes}, {"fingerprint", "text", r.Fingerprint},
		{"created_at", "timestamptz", r.CreatedAt}}
}

// fastStatement builds the one statement that writes ch, for Create when
// create is set, else for Apply. It returns one row: the number of
// operations written (0: the key exists, or the version moved).
func fastStatement(ch domain.Change, create bool) *stmt {
	s := &stmt{}
	row := toOperationRow(ch.Op)
	w := &s.sql
	if create {
		cols := append(append(opIdentityCols(&row), opContentCols(&row)...), opStateCols(&row)...)
		names, vals := make([]string, len(cols)), make([]string, len(cols))
		for i, c := range cols {
			names[i], vals[i] = c.name, s.arg(c.v, c.typ)
		}
		w.WriteString("WITH o AS (INSERT INTO operations (" + strings.Join(names, ", ") + ") VALUES (" +
			strings.Join(vals, ", ") + ") ON CONFLICT DO NOTHING RETURNING id)")
	} else {
		cols := stateColsToWrite(ch, &row)
		if ch.Content != nil {
			cols = append(cols, opContentCols(&row)...)
		}
		set := make([]string, len(cols))
		for i, c := range cols {
			set[i] = c.name + " = " + s.arg(c.v, c.typ)
		}
		w.WriteString("WITH o AS (UPDATE operations SET " + strings.Join(set, ", ") + " WHERE id = " + s.arg(row.ID, "text") +
			" AND version = " + s.arg(ch.FromVersion, "bigint"))
		if ch.LiveLease {
			w.WriteString(" AND lease_expires_at > clock_timestamp()")
		}
		if ch.Content == nil {
			// Belt and braces: a change without a snapshot leaves the
			// content as it is, so it must be the content it was decided on.
			w.WriteString(" AND content_version = " + s.arg(row.ContentVersion, "integer"))
		}
		w.WriteString(" RETURNING id)")
	}
	if c := ch.Content; c != nil { // New: fastPathEligible admits no other
		insertFromO(s, "c", "content_versions", contentVersionCols(c.Version))
	}
	if a := ch.Attempt; a != nil {
		r := toAttemptRow(a.Attempt)
		if a.New {
			insertFromO(s, "a", "attempts", newAttemptCols(r))
		} else {
			// As writeAttempt: a begin sets began_at, a settle the outcome.
			var set []string
			if r.BeganAt != nil {
				set = append(set, "began_at = "+s.arg(*r.BeganAt, "timestamptz"))
			}
			if r.SettledAt != nil {
				set = append(set, "settled_at = "+s.arg(*r.SettledAt, "timestamptz"), "outcome = "+s.arg(r.Outcome, "text"),
					"error_class = "+s.arg(r.ErrorClass, "text"), "error_code = "+s.arg(r.ErrorCode, "text"),
					"error_message = "+s.arg(r.ErrorMessage, "text"))
			}
			if len(set) > 0 {
				w.WriteString(", a AS (UPDATE attempts SET " + strings.Join(set, ", ") + " WHERE operation_id = " +
					s.arg(r.OperationID, "text") + " AND number = " + s.arg(r.Number, "integer") + " AND EXISTS (SELECT 1 FROM o))")
			}
		}
	}
	if len(ch.Events) > 0 {
		w.WriteString(", e AS (INSERT INTO audit_events (" + auditInsertColumns + ") SELECT v.* FROM o, (VALUES ")
		for i, e := range ch.Events {
			if i > 0 {
				w.WriteString(", ")
			}
			cols := auditCols(toAuditRow(e))
			vals := make([]string, len(cols))
			for j, c := range cols {
				vals[j] = s.arg(c.v, c.typ)
			}
			w.WriteString("(" + strings.Join(vals, ", ") + ")")
		}
		w.WriteString(") AS v (" + auditInsertColumns + "))")
	}
	w.WriteString(" SELECT count(*) FROM o")
	return s
}

// auditInsertColumns are the columns an insert writes (pos is the
// sequence's): auditCols' names.
const auditInsertColumns = "id, stream, seq, operation_id, namespace, at, actor_kind, actor_name, actor_namespace, " +
	"actor_issuer, actor_subject, actor_email, actor_role, action, from_state, to_state, reason, detail, request_id, " +
	"client_addr, prev_hash, hash"

// contentVersionCols, newAttemptCols and auditCols are the rows a change
// adds beside its operation, as the single statement and the multi-row one
// (multirow.go) both write them.
func contentVersionCols(v domain.ContentVersion) []col {
	return []col{{"operation_id", "text", v.OperationID}, {"version", "integer", v.Version},
		{"content", "text", string(v.Content)}, {"sha256", "text", v.SHA256}, {"created_by", "text", v.CreatedBy},
		{"created_by_issuer", "text", v.CreatedByIssuer}, {"created_by_subject", "text", v.CreatedBySubject},
		{"created_at", "timestamptz", v.CreatedAt.UTC()}, {"reason", "text", v.Reason}}
}

func newAttemptCols(r attemptRow) []col {
	return []col{{"id", "text", r.ID}, {"operation_id", "text", r.OperationID},
		{"number", "integer", r.Number}, {"worker", "text", r.Worker}, {"lease_token", "bigint", r.LeaseToken},
		{"claimed_at", "timestamptz", r.ClaimedAt}, {"began_at", "timestamptz", r.BeganAt},
		{"settled_at", "timestamptz", r.SettledAt}, {"outcome", "text", r.Outcome},
		{"error_class", "text", r.ErrorClass}, {"error_code", "text", r.ErrorCode},
		{"error_message", "text", r.ErrorMessage}}
}

func auditCols(r auditRow) []col {
	return []col{{"id", "text", r.ID}, {"stream", "text", r.Stream}, {"seq", "bigint", r.Seq},
		{"operation_id", "text", r.OperationID}, {"namespace", "text", r.Namespace}, {"at", "timestamptz", r.At},
		{"actor_kind", "text", r.ActorKind}, {"actor_name", "text", r.ActorName},
		{"actor_namespace", "text", r.ActorNamespace}, {"actor_issuer", "text", r.ActorIssuer},
		{"actor_subject", "text", r.ActorSubject}, {"actor_email", "text", r.ActorEmail},
		{"actor_role", "text", r.ActorRole}, {"action", "text", r.Action}, {"from_state", "text", r.FromState},
		{"to_state", "text", r.ToState}, {"reason", "text", r.Reason}, {"detail", "text", r.Detail},
		{"request_id", "text", r.RequestID}, {"client_addr", "text", r.ClientAddr},
		{"prev_hash", "text", r.PrevHash}, {"hash", "text", r.Hash}}
}

// insertFromO adds a CTE named name that inserts one row of cols into
// table if the statement wrote its operation (o).
func insertFromO(s *stmt, name, table string, cols []col) {
	names, vals := make([]string, len(cols)), make([]string, len(cols))
	for i, c := range cols {
		names[i], vals[i] = c.name, s.arg(c.v, c.typ)
	}
	s.sql.WriteString(", " + name + " AS (INSERT INTO " + table + " (" + strings.Join(names, ", ") + ") SELECT " +
		strings.Join(vals, ", ") + " FROM o)")
}

// applyFast is Apply in one statement.
func (s *Store) applyFast(ctx context.Context, ch domain.Change) error {
	n, err := s.gc.write(ctx, ch, false)
	if err != nil {
		return err
	}
	if n == 0 {
		return domain.Errorf(domain.EConflict, "operation %s moved past version %d", ch.Op.ID, ch.FromVersion)
	}
	return nil
}

// createFast is Create in one statement; false when the key exists.
func (s *Store) createFast(ctx context.Context, ch domain.Change) (bool, error) {
	n, err := s.gc.write(ctx, ch, true)
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// opColumns are operationRow's columns in scanOp's order.
const opColumns = "id, namespace, key, type, state, version, event_id, source, correlation_id, caused_by, supersedes, " +
	"superseded_by, fingerprint, content_version, content_sha256, content, content_author, approval_version, approval_by, " +
	"approval_at, provider_key, provider_key_first_sent_at, attempts, retry_from, first_attempt_at, lease_token, " +
	"lease_worker, lease_expires_at, next_retry_at, result_ref, result_data, last_error_class, last_error_code, " +
	"last_error_message, assignee, resolution_action, resolution_by, resolution_reason, resolution_at, audit_head, " +
	"created_at, updated_at, desk_entered_at, assigned_at, escalated_at, assignee_issuer, assignee_subject, content_purged_at, provider_key_content_version"

// loadFast is load on PostgreSQL through pgx, scanned by hand: the hot
// path reads each operation once per call, and GORM's reflection was a
// large part of that read's cost.
func (s *Store) loadFast(ctx context.Context, where string, args ...any) (domain.Operation, time.Time, error) {
	var r operationRow
	var now time.Time
	var purgedAt *time.Time
	sent := time.Now()
	// Under keyedPlans, as the flushes: a generic plan made while the
	// table was small reads it whole for every load.
	b := &pgx.Batch{}
	b.Queue(keyedPlans)
	b.Queue("SELECT "+opColumns+", clock_timestamp() FROM operations WHERE "+where+" LIMIT 1", args...)
	br := s.pool.SendBatch(ctx, b)
	_, err := br.Exec()
	if err != nil {
		br.Close()
		return domain.Operation{}, time.Time{}, translate(err, "operation")
	}
	err = br.QueryRow().Scan(
		&r.ID, &r.Namespace, &r.Key, &r.Type, &r.State, &r.Version, &r.EventID, &r.Source, &r.CorrelationID, &r.CausedBy,
		&r.Supersedes, &r.SupersededBy, &r.Fingerprint, &r.ContentVersion, &r.ContentSHA256, &r.Content, &r.ContentAuthor,
		&r.ApprovalVersion, &r.ApprovalBy, &r.ApprovalAt, &r.ProviderKey, &r.ProviderKeyFirstSentAt, &r.Attempts,
		&r.RetryFrom, &r.FirstAttemptAt, &r.LeaseToken, &r.LeaseWorker, &r.LeaseExpiresAt, &r.NextRetryAt, &r.ResultRef,
		&r.ResultData, &r.LastErrorClass, &r.LastErrorCode, &r.LastErrorMessage, &r.Assignee, &r.ResolutionAction,
		&r.ResolutionBy, &r.ResolutionReason, &r.ResolutionAt, &r.AuditHead, &r.CreatedAt, &r.UpdatedAt,
		&r.DeskEnteredAt, &r.AssignedAt, &r.EscalatedAt, &r.AssigneeIssuer, &r.AssigneeSubject, &purgedAt, &r.ProviderKeyContentVersion, &now)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Operation{}, time.Time{}, domain.Errorf(domain.ENotFound, "no such operation")
	} else if err != nil {
		return domain.Operation{}, time.Time{}, translate(err, "operation")
	}
	op, err := r.toDomain()
	if err != nil {
		return domain.Operation{}, time.Time{}, domain.Wrap(domain.EInternal, err, "unreadable operation row")
	}
	op.ContentPurgedAt = utcPtr(purgedAt)
	s.lc.clock(now, sent, time.Now())
	return op, now.UTC(), nil
}
