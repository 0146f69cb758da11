package store

import (
	"strconv"
	"strings"
)

// Multi-row writes: within one group-commit flush, the changes of one kind
// are written by one statement instead of one each — all updates of
// existing operations in one, all new operations in another — each table's
// rows sent as arrays and spread out by unnest. Each operation's
// compare-and-set still holds row by row: the statement returns the ids it
// wrote, and a change whose id is missing is that change's conflict (or
// taken key) alone.
//
// The audit chain is per operation (stream = operation id, seq = version),
// and a change's events are written only if its own row was, so the chain
// is exactly as the single statements leave it. One statement sees one
// snapshot, so two changes of the same operation (or two creates of the
// same key, or two registrations of one content each held for no open
// twin, twin.go) must not share it: planFlush sends every later one as its
// own statement after the multi-row ones, in the same transaction, where
// it meets the first one's write.

// multiTable is one table's rows in a multi-row write: a column's values
// are sent as one array of the column's type, in pgx's binary form
// (pgarray.go), and NULLs pass as NULL.
type multiTable struct {
	names, typs []string
	vals        []multiCol
	rows        int // how many rows to make room for: a hint
}

// add appends one row; the first row fixes the columns.
func (t *multiTable) add(cols []col) {
	if t.names == nil {
		t.names, t.typs, t.vals = make([]string, len(cols)), make([]string, len(cols)), make([]multiCol, len(cols))
		for i, c := range cols {
			t.names[i], t.typs[i] = c.name, c.typ
			t.vals[i].init(c.typ, t.rows)
		}
	}
	for i, c := range cols {
		t.vals[i].add(c.v)
	}
}

func (t *multiTable) empty() bool { return len(t.vals) == 0 || t.vals[0].n == 0 }

// from is the table as a FROM item named alias, its columns typed.
func (t *multiTable) from(s *stmt, alias string) string {
	args := make([]string, len(t.names))
	for i := range t.names {
		args[i] = s.arg(t.vals[i].array(), t.typs[i]+"[]")
	}
	return "unnest(" + strings.Join(args, ", ") + ") AS " + alias + " (" + strings.Join(t.names, ", ") + ")"
}

// list is the columns from start on, each prefixed by alias.
func (t *multiTable) list(alias string, start int) string {
	out := make([]string, 0, len(t.names)-start)
	for _, n := range t.names[start:] {
		if alias != "" {
			n = alias + "." + n
		}
		out = append(out, n)
	}
	return strings.Join(out, ", ")
}

// childTables are the rows plans add beside their operations: the first
// column of each is "of", the operation id the row depends on.
type childTables struct {
	content, attempts multiTable
	attemptUpdates    multiSet
	events            multiTable
}

func (tables *childTables) add(p *writePlan) {
	of := col{"of", "text", p.op.ID}
	row := func(cols []col) []col { return append(append(make([]col, 0, 1+len(cols)), of), cols...) }
	if c := p.content; c != nil {
		tables.content.add(row(c.insert)) // routeMulti: a new snapshot only
	}
	if a := p.attempt; a != nil {
		if a.insert != nil {
			tables.attempts.add(row(a.insert))
		} else {
			tables.attemptUpdates.rows = append(tables.attemptUpdates.rows, a)
			tables.attemptUpdates.of = append(tables.attemptUpdates.of, p.op.ID)
		}
	}
	cols := make([]col, 0, len(auditTable)) // each event's in turn
	for i := range p.events {
		tables.events.add(appendCols(append(cols[:0], of), auditTable, &p.events[i], identity))
	}
}

// multiSet is the child rows of several plans that set columns of rows
// that exist: each row sets its own columns of the union, and keeps the
// others (its w_ flag false).
type multiSet struct {
	rows []*childWrite
	of   []string
}

// table is the rows as one multiTable: of, the key columns, then for each
// column any row sets, its value and whether this row sets it.
func (m *multiSet) table() (t multiTable, set []string) {
	t.rows = len(m.rows)
	seen := map[string]bool{}
	var union []col
	for _, r := range m.rows {
		for _, c := range r.set {
			if !seen[c.name] {
				seen[c.name] = true
				union = append(union, col{c.name, c.typ, nil})
				set = append(set, c.name)
			}
		}
	}
	for i, r := range m.rows {
		cols := append([]col{{"of", "text", m.of[i]}}, r.key...)
		for _, u := range union {
			v, w := any(nil), false
			for _, c := range r.set {
				if c.name == u.name {
					v, w = c.v, true
				}
			}
			cols = append(cols, col{u.name, u.typ, v}, col{"w_" + u.name, "boolean", w})
		}
		t.add(cols)
	}
	return t, set
}

// write adds the tables' CTEs, each writing only the rows whose
// operation is in o (written by this statement); attemptUpdateTable and
// setCols are attemptUpdates as one table.
func (tables *childTables) write(s *stmt, attemptUpdateTable *multiTable, setCols []string) {
	w := &s.sql
	insert := func(name, table string, t *multiTable) {
		if t.empty() {
			return
		}
		w.WriteString(", " + name + " AS (INSERT INTO " + table + " (" + t.list("", 1) + ") SELECT " + t.list("x", 1) +
			" FROM " + t.from(s, "x") + " WHERE x.of IN (SELECT id FROM o))")
	}
	insert("c", "content_versions", &tables.content)
	insert("a", "attempts", &tables.attempts)
	if len(tables.attemptUpdates.rows) > 0 {
		set := make([]string, len(setCols))
		for i, c := range setCols {
			set[i] = c + " = CASE WHEN x.w_" + c + " THEN x." + c + " ELSE t." + c + " END"
		}
		key := tables.attemptUpdates.rows[0].key
		where := make([]string, len(key))
		for i, c := range key {
			where[i] = "t." + c.name + " = x." + c.name
		}
		w.WriteString(", u AS (UPDATE attempts AS t SET " + strings.Join(set, ", ") + " FROM " + attemptUpdateTable.from(s, "x") +
			" WHERE " + strings.Join(where, " AND ") + " AND x.of IN (SELECT id FROM o))")
	}
	insert("e", "audit_events", &tables.events)
}

// multiStatement writes plans (all creates or all updates, each operation
// once, each routeMulti) in one statement, which returns the id of every
// operation it wrote. Its text is rendered once per shape, as a single
// statement's is (stmtcache.go): the tables' columns decide it, the
// arrays of values are its arguments.
func multiStatement(plans []*writePlan) *stmt {
	ops := multiTable{rows: len(plans)}
	childRows := childTables{content: multiTable{rows: len(plans)}, attempts: multiTable{rows: len(plans)},
		events: multiTable{rows: 2 * len(plans)}}
	create := plans[0].create
	// An update writes the columns any of its plans writes: one column
	// list for every row, so a row whose value did not change sends it
	// again, as it is.
	written := map[string]bool{}
	for i := range plans {
		for _, c := range plans[i].cols {
			written[c.name] = true
		}
	}
	for i := range plans {
		p := plans[i]
		if create {
			// Whether the row's write is held for no twin, then the row.
			ops.add(append(append(make([]col, 0, 1+len(p.cols)), col{"no_twin", "boolean", p.noTwin}), p.cols...))
		} else {
			// The guard's values (routeMulti: an update without a content
			// snapshot, so the content version is always checked).
			g := p.guard
			cols := append(make([]col, 0, 4+len(written)), col{"id", "text", g.id}, col{"from_version", "bigint", g.version},
				col{"from_content_version", "integer", g.contentVersion}, col{"live", "boolean", g.liveLease})
			// Only the columns written are read (and boxed) from the row.
			for _, c := range opTable {
				if c.class == state && written[c.name] {
					cols = append(cols, col{c.name, c.typ, valueOf(c.field(&p.op))})
				}
			}
			ops.add(cols)
		}
		childRows.add(p)
	}
	var attemptUpdateTable multiTable
	var setCols []string
	if len(childRows.attemptUpdates.rows) > 0 {
		attemptUpdateTable, setCols = childRows.attemptUpdates.table()
	}
	tables := [...]*multiTable{&ops, &childRows.content, &childRows.attempts, &attemptUpdateTable, &childRows.events}
	var buf [1024]byte
	key := append(buf[:0], flag(create))
	for _, t := range tables {
		key = append(key, '|')
		for i := range t.names {
			key = append(append(append(append(key, t.names[i]...), ':'), t.typs[i]...), ',')
		}
	}
	if len(childRows.attemptUpdates.rows) > 0 {
		key = strconv.AppendInt(append(key, '|'), int64(len(childRows.attemptUpdates.rows[0].key)), 10)
	}
	sql, ok := multiSQL.get(key)
	if !ok {
		s := renderMulti(create, &ops, &childRows, &attemptUpdateTable, setCols)
		multiSQL.put(key, s.sql.String())
		return s
	}
	s := &stmt{text: sql}
	for _, t := range tables {
		for i := range t.vals {
			s.args = append(s.args, t.vals[i].array())
		}
	}
	if verifyStatementCache {
		verifyCached(key, s, renderMulti(create, &ops, &childRows, &attemptUpdateTable, setCols))
	}
	return s
}

// renderMulti renders the multi-row statement of the tables.
func renderMulti(create bool, ops *multiTable, childRows *childTables, attemptUpdateTable *multiTable, setCols []string) *stmt {
	s := &stmt{}
	w := &s.sql
	if create {
		w.WriteString("WITH o AS (INSERT INTO operations (" + ops.list("", 1) + ") SELECT " + ops.list("v", 1) +
			" FROM " + ops.from(s, "v") + " WHERE NOT v.no_twin OR " + noTwinSQL("v.namespace", "v.identity_hash", "v.key") +
			" ON CONFLICT DO NOTHING RETURNING id)")
	} else {
		set := make([]string, 0, len(ops.names)-4)
		for _, n := range ops.names[4:] {
			set = append(set, setAsDecided("t.", "v.", n))
		}
		w.WriteString("WITH o AS (UPDATE operations AS t SET " + strings.Join(set, ", ") + " FROM " + ops.from(s, "v") +
			" WHERE " + guardSQL("t.", "v.id", "v.from_version", "v.from_content_version", "v.live") + " RETURNING t.id)")
	}
	childRows.write(s, attemptUpdateTable, setCols)
	w.WriteString(" SELECT id FROM o")
	return s
}

// multiMin is the fewest changes of a kind worth a multi-row statement:
// below it a statement each, whose plan is simpler and cached, is as fast
// or faster (BenchmarkGroupCommit_flush; docs/design/performance-log.md).
const multiMin = 4

// multiRowOn is off only in the benchmark that compares the two ways.
var multiRowOn = true

// flushPart is one statement of a flush: several changes' multi-row
// statement, or one change's own.
type flushPart struct {
	idx    []int // the changes' places in the batch
	create bool
	multi  bool
}

// planFlush splits a batch into statements: one multi-row statement per
// kind holding at least multiMin changes, then every other change alone — those
// not eligible, and a second change of an operation, key or twin turn
// already in a multi-row statement, which must see that statement's write.
func planFlush(batch []*commitRequest) []flushPart {
	var upd, crt, rest []int
	var parts []flushPart
	if !multiRowOn {
		for i, r := range batch {
			parts = append(parts, flushPart{idx: []int{i}, create: r.p.create})
		}
		return parts
	}
	seen := map[string]bool{}
	for i, r := range batch {
		op := &r.p.op
		keys := []string{"id\x00" + op.ID}
		if r.p.create {
			keys = append(keys, "key\x00"+op.Namespace+"\x00"+op.Key)
		}
		if k := twinTurn(r.p); k != "" {
			keys = append(keys, k)
		}
		dup := false
		for _, k := range keys {
			dup = dup || seen[k]
		}
		if dup || r.p.route != routeMulti {
			rest = append(rest, i)
			continue
		}
		for _, k := range keys {
			seen[k] = true
		}
		if r.p.create {
			crt = append(crt, i)
		} else {
			upd = append(upd, i)
		}
	}
	for _, g := range []struct {
		idx    []int
		create bool
	}{{upd, false}, {crt, true}} {
		if len(g.idx) >= multiMin {
			parts = append(parts, flushPart{idx: g.idx, create: g.create, multi: true})
		} else {
			rest = append(append([]int{}, g.idx...), rest...)
		}
	}
	for _, i := range rest {
		parts = append(parts, flushPart{idx: []int{i}, create: batch[i].p.create})
	}
	return parts
}
