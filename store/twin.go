package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/opshandoff/handoff/domain"
)

// twinWhere finds a twin among the open states (domain.TwinStates): a
// registration of the same identity (domain.IdentityHash: the exact
// content, or the fields the card's identity names) under another key
// waits for a person while one of its twins is in them. The operations in
// those states are the rows of open_operations (migration 00029), which a
// trigger keeps in the transaction of each write of operations, indexed by
// namespace and identity hash (open_operations_twins): the condition is on
// that table. With the alias x ("x."), the twin of the row whose
// namespace, identity hash and key are ns, fp and key (SQL).
func twinWhere(x, ns, fp, key string) string {
	return x + "namespace = " + ns + " AND " + x + "identity_hash = " + fp + " AND " + x + "key <> " + key
}

// twinStatesSQL is domain.TwinStates as an SQL list of literals: the
// states whose operations the trigger of migration 00029 keeps in
// open_operations (a test checks it against the migration).
var twinStatesSQL = func() string {
	names := make([]string, len(domain.TwinStates))
	for i, st := range domain.TwinStates {
		names[i] = "'" + st.String() + "'"
	}
	return "(" + strings.Join(names, ", ") + ")"
}()

// noTwinSQL is the condition of a registration's write that is held for
// no twin (domain.Change.NoOpenTwin): the write itself looks, as a nested
// loop over open_operations_twins, so a registration without a twin — nearly
// every one — pays no statement of its own for the lookup.
func noTwinSQL(ns, fp, key string) string {
	return "NOT EXISTS (SELECT 1 FROM open_operations AS x WHERE " + twinWhere("x.", ns, fp, key) + ")"
}

// Registrations of one content take turns. On PostgreSQL (READ COMMITTED)
// two registrations of one content under different keys at once would
// each look in a snapshot that holds neither's row, both find no twin, and
// both be handed out: two executions. So a write held for no twin first
// takes a transaction-scoped advisory lock of its namespace and
// identity hash (its turn), in a statement of its own before the write: a
// statement's snapshot is taken when it starts, so the write, which starts
// after the turn is granted, sees the row of any registration that held
// the turn before it and committed. A lock taken inside the write's own
// statement would not: its snapshot is older than the lock. The turn costs
// no statement of its own: it rides on the statement that opens every
// flush (keyedPlans), and only when the flush holds such a write. Two
// such writes in one flush hold one turn; planFlush never puts them in one
// multi-row statement, whose rows share a snapshot, but sends the later
// one as its own statement after it, where it sees the first one's row.
//
// A flush takes its turns in one statement, in the order of their lock
// keys, so two flushes that want the same two turns cannot deadlock, and
// before any row it writes. The keys are named by schema, like the
// store's other advisory locks: two Handoffs in one database do not wait
// on each other. Two identities whose keys collide only take turns that
// they need not.

// twinTurnKey is the advisory lock key of a namespace and identity hash (SQL).
func twinTurnKey(ns, fp string) string {
	return "hashtextextended('handoff.twin:' || current_schema() || ':' || " + ns + " || ':' || " + fp + ", 0)"
}

// keyedPlansTwinTurns is keyedPlans that also takes the turns of the
// namespaces and identity hashes in its two text arrays.
var keyedPlansTwinTurns = keyedPlans + ", (SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT DISTINCT " +
	twinTurnKey("t.ns", "t.fp") + " AS k FROM unnest($1::text[], $2::text[]) AS t (ns, fp) ORDER BY k) AS turns)"

// twinTurnTx is the turn as the transaction renderer takes it, on
// PostgreSQL, as the first statement of the registration's transaction.
var twinTurnTx = "SELECT pg_advisory_xact_lock(" + twinTurnKey("CAST(? AS text)", "CAST(? AS text)") + ")"

// flushOpening is the statement that opens a flush of the plans, and its
// arguments: keyedPlans, with the turns of its writes held for no twin.
func flushOpening(plans ...*writePlan) (string, []any) {
	var ns, fp []string
	for _, p := range plans {
		if p.create && p.noTwin {
			ns, fp = append(ns, p.op.Namespace), append(fp, p.op.IdentityHash)
		}
	}
	if len(ns) == 0 {
		return keyedPlans, nil
	}
	return keyedPlansTwinTurns, []any{ns, fp}
}

// twinTurn is what two writes held for no twin share when they must not
// share a statement ("" for any other plan).
func twinTurn(p *writePlan) string {
	if !p.create || !p.noTwin {
		return ""
	}
	return "twin\x00" + p.op.Namespace + "\x00" + p.op.IdentityHash
}

// twinQuery is the oldest twin, as the hold names it, as GORM sends it
// (SQLite); twinFastQuery as pgx does (PostgreSQL's placeholders, the
// columns scanTargets reads).
var twinQuery = "SELECT * FROM operations WHERE id IN (SELECT id FROM open_operations WHERE " + twinWhere("", "?", "?", "?") +
	") ORDER BY created_at, id LIMIT 1"

var twinFastQuery = "SELECT " + opColumns + " FROM operations WHERE id IN (SELECT id FROM open_operations WHERE " +
	twinWhere("", "$1", "$2", "$3") + ") ORDER BY created_at, id LIMIT 1"

// Twin implements domain.Store: the oldest operation in the namespace with
// the identity hash under another key whose outcome is open.
func (s *Store) Twin(ctx context.Context, namespace, identity, key string) (domain.Operation, bool, error) {
	if s.pool != nil {
		return s.twinFast(ctx, namespace, identity, key)
	}
	var rows []operationWithClock
	err := s.db.WithContext(ctx).Raw(twinQuery, namespace, identity, key).Scan(&rows).Error
	if err != nil {
		return domain.Operation{}, false, translate(err, "operation")
	}
	return firstOperation(rows)
}

// twinFast is Twin on PostgreSQL through pgx, scanned by hand as loadFast
// is: every registration asks, and through GORM the question cost the
// server about a seventh of its CPU per lifecycle — database/sql's
// wrapping, reflection over the row, and GORM's Scan rendering the
// statement with its values for a logger that discards it.
func (s *Store) twinFast(ctx context.Context, namespace, identity, key string) (domain.Operation, bool, error) {
	var r operationRow
	err := s.pool.QueryRow(ctx, twinFastQuery, namespace, identity, key).
		Scan(scanTargets(opTable, &r)...)
	if errors.Is(err, pgx.ErrNoRows) {
		return domain.Operation{}, false, nil
	} else if err != nil {
		return domain.Operation{}, false, translate(err, "operation")
	}
	op, err := r.toDomain()
	if err != nil {
		return domain.Operation{}, false, domain.Wrap(domain.EInternal, err, "unreadable operation row")
	}
	return op, true, nil
}

// echoQuery is the operation of the identity that completed latest, since
// a time: what a card's echo guard names as the original of an echo. The
// completed operations are rows of final_operations (migration 00029),
// with their last change; its partial index final_operations_echoes holds
// them by namespace, identity and that time, and the condition spells its
// predicate word for word.
var echoQuery = "SELECT * FROM operations WHERE id = (SELECT f.id FROM final_operations f WHERE f.namespace = ? AND f.identity_hash = ?" +
	" AND f.state = 'completed' AND f.identity_hash <> '' AND f.updated_at >= ? ORDER BY f.updated_at DESC, f.id LIMIT 1)"

// CompletedTwin implements domain.Store: the operation in the namespace
// with the identity hash that completed latest, at or after since.
func (s *Store) CompletedTwin(ctx context.Context, namespace, identity string, since time.Time) (domain.Operation, bool, error) {
	var rows []operationWithClock
	err := s.db.WithContext(ctx).Raw(echoQuery, namespace, identity, since.UTC()).Scan(&rows).Error
	if err != nil {
		return domain.Operation{}, false, translate(err, "operation")
	}
	return firstOperation(rows)
}

// firstOperation is the first of rows as an operation, false when none.
func firstOperation(rows []operationWithClock) (domain.Operation, bool, error) {
	if len(rows) == 0 {
		return domain.Operation{}, false, nil
	}
	op, err := rows[0].Row.toDomain()
	if err != nil {
		return domain.Operation{}, false, domain.Wrap(domain.EInternal, err, "unreadable operation row")
	}
	return op, true, nil
}
