package store

import (
	"strconv"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
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
// same key) must not share it: planFlush sends every later one as its own
// statement after the multi-row ones, in the same transaction, where it
// meets the first one's write.

// multiTable is one table's rows in a multi-row write: a column's values
// are sent as one text array and cast to the column's type in SQL, so every
// column needs one codec only and NULLs pass as NULL.
type multiTable struct {
	names, typs []string
	vals        [][]*string
}

// add appends one row; the first row fixes the columns.
func (t *multiTable) add(cols []col) {
	if t.names == nil {
		for _, c := range cols {
			t.names, t.typs = append(t.names, c.name), append(t.typs, c.typ)
		}
		t.vals = make([][]*string, len(cols))
	}
	for i, c := range cols {
		t.vals[i] = append(t.vals[i], textOf(c.v))
	}
}

func (t *multiTable) empty() bool { return len(t.vals) == 0 || len(t.vals[0]) == 0 }

// from is the table as a FROM item named alias, its columns typed.
func (t *multiTable) from(s *stmt, alias string) string {
	args := make([]string, len(t.names))
	for i := range t.names {
		args[i] = s.arg(t.vals[i], "text[]") + "::" + t.typs[i] + "[]"
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

// textOf is v in PostgreSQL's text input form; nil for a nil pointer.
func textOf(v any) *string {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case *string:
		if x == nil {
			return nil
		}
		s = *x
	case int:
		s = strconv.Itoa(x)
	case *int:
		if x == nil {
			return nil
		}
		s = strconv.Itoa(*x)
	case int64:
		s = strconv.FormatInt(x, 10)
	case bool:
		s = strconv.FormatBool(x)
	case time.Time:
		s = pgTime(x)
	case *time.Time:
		if x == nil {
			return nil
		}
		s = pgTime(*x)
	default:
		panic("multirow: no text form for a column value") // a column type added without its case here
	}
	return &s
}

// pgTime is t as pgx's binary encoding stores it: cut (not rounded) to
// the microsecond, so both paths write the same instant.
func pgTime(t time.Time) string { return t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano) }

// multiEligible: the change may share a multi-row statement of its kind.
// An update carries no content snapshot (opStateCols only); a create may
// carry its first snapshot.
func multiEligible(ch domain.Change, create bool) bool {
	if !fastPathEligible(ch) {
		return false
	}
	if create {
		return ch.Attempt == nil || ch.Attempt.New
	}
	return ch.Content == nil
}

// children are the rows every change may add beside its operation: the
// first column of each is "of", the operation id the row depends on.
type children struct {
	content, attemptNew, attemptSet, events multiTable
}

func (k *children) add(ch domain.Change) {
	of := []col{{"of", "text", ch.Op.ID}}
	if c := ch.Content; c != nil {
		k.content.add(append(of, contentVersionCols(c.Version)...))
	}
	if a := ch.Attempt; a != nil {
		r := toAttemptRow(a.Attempt)
		switch {
		case a.New:
			k.attemptNew.add(append(of, newAttemptCols(r)...))
		case r.BeganAt != nil || r.SettledAt != nil:
			// As writeAttempt: a begin sets began_at, a settle the outcome
			// (a NULL settled_at below keeps the outcome as it is).
			k.attemptSet.add(append(of, col{"operation_id", "text", r.OperationID}, col{"number", "integer", r.Number},
				col{"began_at", "timestamptz", r.BeganAt}, col{"settled_at", "timestamptz", r.SettledAt},
				col{"outcome", "text", r.Outcome}, col{"error_class", "text", r.ErrorClass},
				col{"error_code", "text", r.ErrorCode}, col{"error_message", "text", r.ErrorMessage}))
		}
	}
	for _, e := range ch.Events {
		k.events.add(append(of, auditCols(toAuditRow(e))...))
	}
}

// write adds the children's CTEs, each writing only the rows whose
// operation is in o (written by this statement).
func (k *children) write(s *stmt) {
	w := &s.sql
	insert := func(name, table string, t *multiTable) {
		if t.empty() {
			return
		}
		w.WriteString(", " + name + " AS (INSERT INTO " + table + " (" + t.list("", 1) + ") SELECT " + t.list("x", 1) +
			" FROM " + t.from(s, "x") + " WHERE x.of IN (SELECT id FROM o))")
	}
	insert("c", "content_versions", &k.content)
	insert("a", "attempts", &k.attemptNew)
	if t := &k.attemptSet; !t.empty() {
		keep := func(c string) string {
			return c + " = CASE WHEN x.settled_at IS NULL THEN t." + c + " ELSE x." + c + " END"
		}
		w.WriteString(", u AS (UPDATE attempts AS t SET began_at = coalesce(x.began_at, t.began_at), " +
			"settled_at = coalesce(x.settled_at, t.settled_at), " + keep("outcome") + ", " + keep("error_class") + ", " +
			keep("error_code") + ", " + keep("error_message") + " FROM " + t.from(s, "x") +
			" WHERE t.operation_id = x.operation_id AND t.number = x.number AND x.of IN (SELECT id FROM o))")
	}
	insert("e", "audit_events", &k.events)
}

// multiStatement writes chs (all creates or all updates, each operation
// once, each multiEligible) in one statement, which returns the id of
// every operation it wrote.
func multiStatement(chs []domain.Change, create bool) *stmt {
	s := &stmt{}
	var ops multiTable
	var kids children
	// An update writes the state columns any of its changes changes
	// (stateColsToWrite): one column list for every row, so a row whose
	// value did not change sends it again, as it is.
	rows := make([]operationRow, len(chs))
	written := map[string]bool{}
	for i, ch := range chs {
		rows[i] = toOperationRow(ch.Op)
		if !create {
			for _, c := range stateColsToWrite(ch, &rows[i]) {
				written[c.name] = true
			}
		}
	}
	for i, ch := range chs {
		row := rows[i]
		if create {
			ops.add(append(append(opIdentityCols(&row), opContentCols(&row)...), opStateCols(&row)...))
		} else {
			// The version the change was decided on, and (belt and braces,
			// as fastStatement) the content it was decided on.
			cols := []col{{"id", "text", row.ID}, {"from_version", "bigint", ch.FromVersion},
				{"from_content_version", "integer", row.ContentVersion}, {"live", "boolean", ch.LiveLease}}
			for _, c := range opStateCols(&row) {
				if written[c.name] {
					cols = append(cols, c)
				}
			}
			ops.add(cols)
		}
		kids.add(ch)
	}
	w := &s.sql
	if create {
		w.WriteString("WITH o AS (INSERT INTO operations (" + ops.list("", 0) + ") SELECT " + ops.list("v", 0) +
			" FROM " + ops.from(s, "v") + " ON CONFLICT DO NOTHING RETURNING id)")
	} else {
		set := make([]string, 0, len(ops.names)-4)
		for _, n := range ops.names[4:] {
			if n == "result_data" {
				// A row whose change did not touch it sends it as decided
				// on, which a content purge since (it keeps the version)
				// has emptied: a purged operation is final, and keeps
				// the purge.
				set = append(set, n+" = CASE WHEN t.content_purged_at IS NULL THEN v.result_data ELSE t.result_data END")
				continue
			}
			set = append(set, n+" = v."+n)
		}
		w.WriteString("WITH o AS (UPDATE operations AS t SET " + strings.Join(set, ", ") + " FROM " + ops.from(s, "v") +
			" WHERE t.id = v.id AND t.version = v.from_version AND t.content_version = v.from_content_version" +
			" AND (NOT v.live OR t.lease_expires_at > clock_timestamp()) RETURNING t.id)")
	}
	kids.write(s)
	w.WriteString(" SELECT id FROM o")
	return s
}

// multiMin is the fewest changes of a kind worth a multi-row statement.
// BenchmarkGroupCommit_flush on 2 cores: at 2 a statement each was faster
// (its plan is simpler and cached), at 4 the two were even, from 8 on the
// multi-row statement took a quarter less time per lifecycle.
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
// not eligible, and a second change of an operation or key already in a
// multi-row statement, which must see that statement's write.
func planFlush(batch []*gcRequest) []flushPart {
	var upd, crt, rest []int
	var parts []flushPart
	if !multiRowOn {
		for i, r := range batch {
			parts = append(parts, flushPart{idx: []int{i}, create: r.create})
		}
		return parts
	}
	seen := map[string]bool{}
	for i, r := range batch {
		ch := r.ch
		keys := []string{"id\x00" + ch.Op.ID}
		if r.create {
			keys = append(keys, "key\x00"+ch.Op.Namespace+"\x00"+ch.Op.Key)
		}
		dup := false
		for _, k := range keys {
			dup = dup || seen[k]
		}
		if dup || !multiEligible(ch, r.create) {
			rest = append(rest, i)
			continue
		}
		for _, k := range keys {
			seen[k] = true
		}
		if r.create {
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
		parts = append(parts, flushPart{idx: []int{i}, create: batch[i].create})
	}
	return parts
}
