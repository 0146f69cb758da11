package store

import (
	"context"
	"database/sql"
	"slices"
	"strings"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// trail is the store's part for the audit trail: its reads, the system stream,
// checkpoints and the purge of expired streams.
type trail struct{ *conn }

// The audit trail's reads: one page for the API, and streams in keyset
// batches for export and verification, so memory stays flat however long
// the trail is.

var _ domain.AuditStore = (*Store)(nil)

// auditBatch is how many events one keyset query fetches while streaming.
const auditBatch = 1000

// lifecycleActions are the machine transitions of every lifecycle, the
// bulk of the trail. The partial indexes of migration 00016 (its index of
// decisions as 00023 lists them) leave them out, and only a query that
// carries their predicates verbatim can use those indexes (a generic plan
// knows nothing of its parameters), so the predicates below are spelled
// exactly as the migrations spell them.
var lifecycleActions = []string{"registered", domain.ActionRegisteredAndClaimed, domain.ActionRegisteredAndBegan,
	"claimed", domain.ActionClaimedAndBegan, "heartbeat", "began", "settled"}

const (
	notLifecycle = "action NOT IN ('registered', 'registered_and_claimed', 'registered_and_began', 'claimed', 'claimed_and_began', 'heartbeat', 'began', 'settled')"
	notWorkflow  = "actor_kind <> 'workflow'"
)

// actorConds are the ways an event can be the actor's, each one served by
// an index of its own but the workflow's: a person's or the system's
// email, name or subject; a token's name only when tokenActor.
func actorConds(tokenActor bool) []string {
	conds := []string{"(" + notWorkflow + " AND actor_email = ?)", "(" + notWorkflow + " AND actor_name = ?)",
		"(" + notWorkflow + " AND actor_subject = ?)"}
	if tokenActor {
		conds = append(conds, "(actor_kind = 'workflow' AND actor_name = ?)")
	}
	return conds
}

// auditWhere turns the selection's filters (not its cursor) into SQL.
// tokenActor says whether q.Actor names an API token, whose events are a
// workflow's; only then are workflow rows searched for the actor, which no
// index serves (most rows are a workflow's, so a token's events are found
// by reading in write order).
func auditWhere(q domain.AuditSelect, tokenActor bool) ([]string, []any) {
	where, args := []string{"1 = 1"}, []any{}
	add := func(cond string, a ...any) { where = append(where, cond); args = append(args, a...) }
	if q.Namespace != "" && q.WithSystem {
		add("(namespace = ? OR stream = ?)", q.Namespace, domain.SystemStream)
	} else if q.Namespace != "" {
		add("namespace = ? AND stream <> ?", q.Namespace, domain.SystemStream)
	}
	if q.OperationID != "" {
		add("stream = ?", q.OperationID) // an operation's stream is its id: the (stream, seq) index serves it
	}
	if q.Actor != "" {
		var conds []string
		for _, c := range actorConds(tokenActor) {
			conds, args = append(conds, c), append(args, q.Actor)
		}
		where = append(where, "("+strings.Join(conds, " OR ")+")")
	}
	if q.Action != "" && slices.Contains(lifecycleActions, q.Action) {
		add("action = ?", q.Action)
	} else if q.Action != "" {
		add("action = ? AND "+notLifecycle, q.Action)
	}
	if q.PeopleOnly {
		add("actor_kind = ?", domain.ActorPerson.String())
	}
	if !q.From.IsZero() {
		add("at >= ?", q.From.UTC())
	}
	if !q.To.IsZero() {
		add("at < ?", q.To.UTC())
	}
	return where, args
}

// LastAudit returns the newest event of the stream with the action; false
// when there is none.
func (s *trail) LastAudit(ctx context.Context, stream, action string) (domain.AuditEvent, bool, error) {
	var rows []auditRow
	err := s.db.WithContext(ctx).Where("stream = ? AND action = ?", stream, action).Order("pos DESC").Limit(1).Find(&rows).Error
	if err != nil || len(rows) == 0 {
		return domain.AuditEvent{}, false, translate(err, "audit event")
	}
	return rows[0].toDomain(), true, nil
}

// EachAudit streams the selection in keyset batches. On PostgreSQL the
// batches read one REPEATABLE READ snapshot: write positions are taken
// before commit, so without it a transaction that committed late could
// fall behind a batch already read and vanish from the export. SQLite
// commits in position order, and its one connection must stay free for
// the server's writes between batches.
func (s *trail) EachAudit(ctx context.Context, q domain.AuditSelect, fn func(domain.AuditEvent) error) error {
	if s.dialect.writersTakeTurns() {
		return s.eachAudit(ctx, q, fn)
	}
	return s.ReadSnapshot(ctx, func(r domain.AuditReader) error { return r.EachAudit(ctx, q, fn) })
}

func (s *trail) eachAudit(ctx context.Context, q domain.AuditSelect, fn func(domain.AuditEvent) error) error {
	token, err := s.tokenActor(ctx, q.Actor)
	if err != nil {
		return err
	}
	where, args := auditWhere(q, token)
	if !q.ByStream {
		return s.batches(ctx, where, args, "pos", []string{"pos"}, fn)
	}
	// The system stream first, so checkpoints and tombstones are known
	// before the streams they speak of; then every other stream in order.
	sys := append(append([]string{}, where...), "stream = '"+domain.SystemStream+"'")
	if err := s.batches(ctx, sys, args, "seq", []string{"seq"}, fn); err != nil {
		return err
	}
	ops := append(append([]string{}, where...), "stream <> '"+domain.SystemStream+"'")
	return s.batches(ctx, ops, args, "stream, seq", []string{"stream", "seq"}, fn)
}

func scanRow(rows *sql.Rows, r *auditRow) error { return rows.Scan(scanTargets(auditTable, r)...) }

// batches runs the query in keyset batches ordered by the key columns. Each
// batch is read whole and its rows closed before fn sees it, so a slow
// reader of the export never holds a connection (on SQLite, the only one).
// Rows are scanned by hand: GORM's reflection was a large part of the
// cost (docs/design/performance-log.md).
func (s *trail) batches(ctx context.Context, where []string, args []any, order string, key []string, fn func(domain.AuditEvent) error) error {
	base := "SELECT " + auditColumns + " FROM audit_events WHERE " + strings.Join(where, " AND ")
	var last []any
	batch := make([]auditRow, 0, auditBatch)
	for {
		query, qargs := base, append([]any{}, args...)
		switch {
		case last == nil:
		case len(key) == 1: // a plain comparison: SQLite ranges over the key only then
			query += " AND " + key[0] + " > ?"
			qargs = append(qargs, last...)
		default:
			query += " AND (" + strings.Join(key, ", ") + ") > (?, ?)"
			qargs = append(qargs, last...)
		}
		batch = batch[:0]
		err := s.reading(ctx, func(db *gorm.DB) error {
			rows, err := db.Raw(query+" ORDER BY "+order+" LIMIT ?", append(qargs, auditBatch)...).Rows()
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				batch = append(batch, auditRow{})
				if err := scanRow(rows, &batch[len(batch)-1]); err != nil {
					return err
				}
			}
			return rows.Err()
		})
		if err != nil {
			return translate(err, "audit event")
		}
		for _, r := range batch {
			if err := fn(r.toDomain()); err != nil {
				return err
			}
		}
		if len(batch) < auditBatch {
			return nil
		}
		r := batch[len(batch)-1]
		switch {
		case len(key) == 2:
			last = []any{r.Stream, r.Seq}
		case key[0] == "seq":
			last = []any{r.Seq}
		default:
			last = []any{r.Pos}
		}
	}
}

// EachOperationHead streams every operation's (id, version, audit head).
func (s *trail) EachOperationHead(ctx context.Context, fn func(domain.StreamHead) error) error {
	type head struct {
		ID        string
		Version   int64
		AuditHead string
	}
	after := ""
	for {
		var hs []head
		err := s.db.WithContext(ctx).Raw("SELECT id, version, audit_head FROM operations WHERE id > ? ORDER BY id LIMIT ?",
			after, auditBatch).Scan(&hs).Error
		if err != nil {
			return translate(err, "operation")
		}
		for _, h := range hs {
			if err := fn(domain.StreamHead{Stream: h.ID, Seq: h.Version, Hash: h.AuditHead}); err != nil {
				return err
			}
		}
		if len(hs) < auditBatch {
			return nil
		}
		after = hs[len(hs)-1].ID
	}
}

// ReadSnapshot runs fn in a read-only transaction: REPEATABLE READ on
// PostgreSQL; on SQLite a deferred transaction, whose first read fixes a
// WAL snapshot without taking the write lock.
func (s *trail) ReadSnapshot(ctx context.Context, fn func(domain.AuditReader) error) error {
	opts := &sql.TxOptions{ReadOnly: true, Isolation: s.dialect.snapshotIsolation()}
	return s.transaction(ctx, func(tx *gorm.DB) error {
		return fn(snapshot{newStore(s.conn.in(tx))})
	}, opts)
}

// snapshot reads through the store bound to a read-only transaction.
type snapshot struct{ s *Store }

func (r snapshot) EachAudit(ctx context.Context, q domain.AuditSelect, fn func(domain.AuditEvent) error) error {
	return r.s.eachAudit(ctx, q, fn)
}

func (r snapshot) EachOperationHead(ctx context.Context, fn func(domain.StreamHead) error) error {
	return r.s.EachOperationHead(ctx, fn)
}
