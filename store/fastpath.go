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

// The hot path on PostgreSQL: one write plan (plan.go) is one statement —
// the compare-and-set of the operation, its attempt, its new content
// snapshot and its audit events in one data-modifying CTE, sent through
// pgx without GORM. One statement is one round trip and, outside a
// transaction, one commit; it is atomic like the transaction it replaces.
// Everything else (SQLite, the cold paths, plans routed to the
// transaction) goes through GORM.

// openPool opens the pgx pool the fast path writes through.
func openPool(rawURL string, size int32) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = size
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

// stmt is a statement under construction: SQL and its arguments; text,
// when set, is its SQL as the statement cache kept it (stmtcache.go), and
// rendering then only collects the arguments, in the order it numbers
// them — one walk of the plan decides both.
type stmt struct {
	sql  strings.Builder
	text string
	args []any
}

// query is the statement's SQL.
func (s *stmt) query() string {
	if s.text != "" {
		return s.text
	}
	return s.sql.String()
}

// newStmt is a statement sized for about n parameters, so that neither its
// text nor its arguments grow step by step while it is written.
func newStmt(n int) *stmt {
	s := &stmt{args: make([]any, 0, n)}
	s.sql.Grow(256 + 36*n)
	return s
}

// argsOnly: the text is kept already; rendering collects the arguments.
func (s *stmt) argsOnly() bool { return s.text != "" }

// write adds SQL text (nothing when only the arguments are collected).
func (s *stmt) write(text string) {
	if s.text == "" {
		s.sql.WriteString(text)
	}
}

// arg adds a parameter and returns its placeholder, cast to the type ("" when
// only the arguments are collected).
func (s *stmt) arg(v any, typ string) string {
	s.args = append(s.args, v)
	if s.argsOnly() {
		return ""
	}
	return "$" + strconv.Itoa(len(s.args)) + "::" + typ
}

// put adds a parameter and writes its placeholder, cast to the type — the
// text arg returns, written in place.
func (s *stmt) put(v any, typ string) {
	s.args = append(s.args, v)
	if s.argsOnly() {
		return
	}
	var n [20]byte
	s.sql.WriteByte('$')
	s.sql.Write(strconv.AppendInt(n[:0], int64(len(s.args)), 10))
	s.sql.WriteString("::")
	s.sql.WriteString(typ)
}

// putCols adds the columns' values as parameters and writes their
// placeholders separated by sep, each after "name = " when assign is set.
func (s *stmt) putCols(cols []col, sep string, assign bool) {
	for i, c := range cols {
		if i > 0 {
			s.write(sep)
		}
		if assign {
			s.write(c.name)
			s.write(" = ")
		}
		s.put(c.v, c.typ)
	}
}

// putNames writes the columns' names, comma separated.
func (s *stmt) putNames(cols []col) {
	for i, c := range cols {
		if i > 0 {
			s.write(", ")
		}
		s.write(c.name)
	}
}

// placeholder is the placeholder of the named column among cols, whose
// first parameter was number first.
func placeholder(cols []col, first int, name string) string {
	for i, c := range cols {
		if c.name == name {
			return "$" + strconv.Itoa(first+i) + "::" + c.typ
		}
	}
	panic("store: no column " + name + " in the plan") // a create writes every column
}

// params is how many parameters renderSingle sends for the plan.
func (p *writePlan) params() int {
	n := len(p.cols) + 3 + len(p.events)*len(auditTable)
	for _, cw := range []*childWrite{p.content, p.attempt} {
		if cw != nil {
			n += len(cw.insert) + len(cw.key) + len(cw.set)
		}
	}
	return n
}

// renderSingle renders the plan as one statement. It returns one row: the
// number of operations written (0: the key exists, or the guard did not
// match). The text is written straight into the statement, without the
// pieces and joins of each list; singleStatement keeps it by shape.
func renderSingle(p *writePlan) *stmt {
	s := newStmt(p.params())
	writeSingle(s, p)
	return s
}

// cachedSingle is the statement with the text the cache kept and the
// plan's arguments: writeSingle's walk, collecting them without writing.
func cachedSingle(p *writePlan, text string) *stmt {
	s := &stmt{text: text, args: make([]any, 0, p.params())}
	writeSingle(s, p)
	return s
}

// writeSingle walks the plan in the statement's order: each value becomes
// the next parameter where its placeholder stands in the text.
func writeSingle(s *stmt, p *writePlan) {
	if p.create {
		s.write("WITH o AS (INSERT INTO operations (")
		s.putNames(p.cols)
		s.write(") SELECT ")
		s.putCols(p.cols, ", ", false)
		if p.noTwin && !s.argsOnly() {
			s.write(" WHERE " + noTwinSQL(placeholder(p.cols, 1, "namespace"), placeholder(p.cols, 1, "identity_hash"),
				placeholder(p.cols, 1, "key")))
		}
		s.write(" ON CONFLICT DO NOTHING RETURNING id)")
	} else {
		s.write("WITH o AS (UPDATE operations SET ")
		s.putCols(p.cols, ", ", true)
		g := p.guard
		cv, live := "", ""
		if g.checkContent {
			cv = s.arg(g.contentVersion, "integer")
		}
		if g.liveLease {
			live = "true"
		}
		id, version := s.arg(g.id, "text"), s.arg(g.version, "bigint")
		if !s.argsOnly() {
			s.write(" WHERE " + guardSQL("", id, version, cv, live) + " RETURNING id)")
		}
	}
	singleChild(s, "c", "content_versions", p.content)
	singleChild(s, "a", "attempts", p.attempt)
	if len(p.events) > 0 {
		s.write(", e AS (INSERT INTO audit_events (")
		s.write(auditInsertColumns)
		s.write(") SELECT v.* FROM o, (VALUES ")
		cols := make([]col, 0, len(auditTable)) // each event's in turn
		for i := range p.events {
			if i > 0 {
				s.write(", ")
			}
			s.write("(")
			cols = appendCols(cols[:0], auditTable, &p.events[i], identity)
			s.putCols(cols, ", ", false)
			s.write(")")
		}
		s.write(") AS v (")
		s.write(auditInsertColumns)
		s.write("))")
	}
	s.write(" SELECT count(*) FROM o")
}

// singleChild adds a CTE named name that writes the child row into table
// if the statement wrote its operation (o): its insert, or its columns
// set where its key matches.
func singleChild(s *stmt, name, table string, cw *childWrite) {
	if cw == nil {
		return
	}
	if cols := cw.insert; cols != nil {
		s.write(", ")
		s.write(name)
		s.write(" AS (INSERT INTO ")
		s.write(table)
		s.write(" (")
		s.putNames(cols)
		s.write(") SELECT ")
		s.putCols(cols, ", ", false)
		s.write(" FROM o)")
		return
	}
	s.write(", ")
	s.write(name)
	s.write(" AS (UPDATE ")
	s.write(table)
	s.write(" SET ")
	s.putCols(cw.set, ", ", true)
	s.write(" WHERE ")
	s.putCols(cw.key, " AND ", true)
	s.write(" AND EXISTS (SELECT 1 FROM o))")
}

// applyFast is Apply in one statement.
func (s *Store) applyFast(ctx context.Context, p *writePlan) error {
	n, err := s.commits.write(ctx, p)
	if err != nil {
		return err
	}
	if n == 0 {
		return domain.Errorf(domain.EConflict, "operation %s moved past version %d", p.guard.id, p.guard.version)
	}
	return nil
}

// createFast is Create in one statement; false when the key exists.
func (s *Store) createFast(ctx context.Context, p *writePlan) (bool, error) {
	n, err := s.commits.write(ctx, p)
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// dollars is the condition with PostgreSQL's numbered placeholders for
// its question marks (it holds no literal text).
func dollars(where string) string {
	var b strings.Builder
	n := 0
	for _, r := range where {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// loadFast is load on PostgreSQL through pgx, scanned by hand: the hot
// path reads each operation once per call, and GORM's reflection was a
// large part of that read's cost.
func (s *Store) loadFast(ctx context.Context, where string, args ...any) (domain.Operation, time.Time, error) {
	var r operationRow
	var now time.Time
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
	err = br.QueryRow().Scan(append(scanTargets(opTable, &r), &now)...)
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
	op.ContentPurgedAt = utcPtr(r.ContentPurgedAt)
	s.leases.clock(now, sent, time.Now())
	return op, now.UTC(), nil
}

// keyedPlans opens every flush. Each statement of a flush finds its rows
// by key — the operation's id, the attempt's operation and number — and
// the one good plan for it is a lookup per row in those indexes. pgx
// prepares each statement once per connection, and after five runs
// PostgreSQL may keep one generic plan for it, costed on the table's size
// and statistics at that moment. A plan made while a table was small, or
// had just been analyzed empty, reads the whole table (a sequential scan,
// a hash join) or the whole primary key (a merge join) at every flush from
// then on, until an ANALYZE replaces it — with autovacuum off, never.
// From a database analyzed empty, a flush read the whole primary key
// (docs/design/performance-log.md). With these off for the flush's own transaction (set_config's is_local), every plan
// made in one is the lookups, whatever the statistics say. Nothing else
// runs under them: they end with the flush's COMMIT, and under PgBouncer's
// transaction pooling they stay with the transaction as it does.
const keyedPlans = "SELECT set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true), " +
	"set_config('enable_mergejoin', 'off', true)"
