package store

import (
	"time"

	"github.com/opshandoff/handoff/domain"
)

// A write plan is what the store writes for one domain.Change, decided
// once and rendered three ways: as GORM calls in a transaction
// (operation.go: SQLite, and the changes only a transaction writes), as
// one data-modifying CTE sent through pgx (fastpath.go), and, for many
// plans at once, as one multi-row unnest statement (multirow.go). The
// rules — which columns a change writes, the compare-and-set's guard, the
// attempt rule — live here, in data; a renderer only spells them.
//
// The search side rows (PostgreSQL's operation_search, migration 00012)
// are written off the write path by the search indexer (search_index.go),
// from a queue a trigger fills (00028), and the identifiers are in indexes
// of their own (00025), so a plan has none of its own.

// route is which renderers may write a plan.
type route int

const (
	// routeMulti: any renderer, the multi-row statement included.
	routeMulti route = iota
	// routeSingle: the single statement or the transaction.
	routeSingle
	// routeTx: the transaction only.
	routeTx
)

// writePlan is one change's write.
type writePlan struct {
	create bool
	op     operationRow
	// cols are the operation's columns written: every one an insert
	// writes, or the columns an update changes.
	cols []col
	// guard is an update's compare-and-set.
	guard casGuard
	// The rows beside the operation, written only if it was.
	attempt *childWrite
	content *childWrite
	events  []auditRow
	outbox  []notificationRow
	// incidentEntry and incidentExit are the incident's part of a desk
	// entry or exit (incident.go), written in the transaction.
	incidentEntry *domain.IncidentEntry
	incidentExit  *domain.IncidentExit
	// superseded is, for a new operation that supersedes a cancelled one,
	// the original's update, written in the same transaction.
	superseded *writePlan
	route      route
	// noTwin is a new operation's condition: no open twin under another
	// key (domain.Change.NoOpenTwin). A write it refuses writes nothing.
	noTwin bool
}

// casGuard is the one compare-and-set guard: the row is updated only if
// it is still at the version the change was decided on, still holds the
// content it was decided on (checked when the change carries no content
// snapshot: it leaves the content as it is), and — for a change decided
// on the lease cache rather than a load — its lease is live by the
// database's clock. guardSQL spells it.
type casGuard struct {
	id             string
	version        int64
	checkContent   bool
	contentVersion int
	liveLease      bool
}

// childWrite is a row written beside the operation: inserted whole
// (insert), or, for a row that exists, the columns set where the key
// columns match.
type childWrite struct {
	insert []col
	key    []col
	set    []col
}

// planCreate is the plan of a change that registers a new operation.
func planCreate(ch domain.Change) *writePlan { return planOf(ch, true) }

// planChange is the plan of a change of an existing operation.
func planChange(ch domain.Change) *writePlan { return planOf(ch, false) }

// planOf allocates the plan once: the renderers and the committer's
// request share it by pointer (a plan holds a whole operation row, and
// copying it at every hand-over was a cost on every write).
func planOf(ch domain.Change, create bool) *writePlan {
	p := &writePlan{create: create, op: toOperationRow(ch.Op)}
	if create {
		p.cols = colsOf(opTable, &p.op, identity, content, state)
		p.noTwin = ch.NoOpenTwin
	} else {
		p.cols = changedCols(ch, &p.op)
		p.guard = casGuard{id: p.op.ID, version: ch.FromVersion, checkContent: ch.Content == nil,
			contentVersion: p.op.ContentVersion, liveLease: ch.LiveLease}
	}
	if a := ch.Attempt; a != nil {
		p.attempt = attemptPlan(*a)
	}
	if c := ch.Content; c != nil {
		p.content = contentPlan(*c)
	}
	if len(ch.Events) > 0 {
		p.events = make([]auditRow, len(ch.Events))
		for i, e := range ch.Events {
			p.events[i] = toAuditRow(e)
		}
	}
	for _, n := range ch.Notifications {
		p.outbox = append(p.outbox, toNotificationRow(n))
	}
	p.incidentEntry, p.incidentExit = ch.IncidentEntry, ch.IncidentExit
	if orig := ch.Superseded; orig != nil {
		p.superseded = planChange(*orig)
	}
	p.route = routeOf(ch, create)
	return p
}

// routeOf: the statements write the operation, its attempt, a new content
// snapshot and its audit events; anything else (a supersede link, a
// content approval or rejection, notifications, a repeat that changes
// nothing, an item's entry into the desk or exit from it, which its
// incident follows) takes the transaction. The multi-row statement also leaves out
// an update with a content snapshot and a registration whose claim's
// attempt already exists.
func routeOf(ch domain.Change, create bool) route {
	switch {
	case ch.Superseded != nil || ch.Unchanged || len(ch.Notifications) > 0 || (ch.Content != nil && !ch.Content.New),
		ch.IncidentEntry != nil || ch.IncidentExit != nil:
		return routeTx
	case create && ch.Attempt != nil && !ch.Attempt.New, !create && ch.Content != nil:
		return routeSingle
	}
	return routeMulti
}

// changedCols are the columns an update writes: the state columns whose
// value differs from the operation the change was decided on
// (domain.Change.Before), or all of them without it, and the content
// columns only with a content snapshot — so a write decided before a
// content purge leaves the purge in place rather than writing back the
// content it loaded. A begin changes few of the state columns, and
// sending, binding and setting only those saves both PostgreSQL's and the
// server's CPU (docs/design/performance-log.md). The guard still covers the whole row: a column not
// written holds what the change was decided on.
func changedCols(ch domain.Change, after *operationRow) []col {
	var out []col
	if ch.Before == nil {
		out = colsOf(opTable, after, state)
	} else {
		// Field by field, boxing only what changed: every begin and settle
		// plans one, and boxing both rows' values to compare them was most
		// of the plan's allocations.
		prev := toOperationRow(*ch.Before)
		out = make([]col, 0, 16)
		for _, c := range opTable {
			if c.class != state {
				continue
			}
			if f := c.field(after); !sameField(f, c.field(&prev)) {
				out = append(out, col{c.name, c.typ, valueOf(f)})
			}
		}
	}
	if ch.Content != nil {
		out = append(out, colsOf(opTable, after, content)...)
	}
	return out
}

// attemptPlan is the attempt rule: a claim inserts its attempt; later a
// begin sets began_at, and a settle the outcome; nothing else of an
// attempt ever changes.
func attemptPlan(a domain.AttemptChange) *childWrite {
	r := toAttemptRow(a.Attempt)
	if a.New {
		return &childWrite{insert: colsOf(attemptTable, &r, identity, state)}
	}
	w := &childWrite{key: pick(attemptTable, &r, "operation_id", "number")}
	if r.BeganAt != nil {
		w.set = append(w.set, pick(attemptTable, &r, "began_at")...)
	}
	if r.SettledAt != nil {
		w.set = append(w.set, pick(attemptTable, &r, "settled_at", "outcome", "error_class", "error_code", "error_message", "settle_sha256")...)
	}
	if len(w.set) == 0 {
		return nil
	}
	return w
}

// contentPlan: a revision inserts its snapshot; a decision on it sets its
// approval or its rejection.
func contentPlan(c domain.ContentChange) *childWrite {
	v := c.Version
	r := contentRow{OperationID: v.OperationID, Version: v.Version, Content: string(v.Content), SHA256: v.SHA256,
		CreatedBy: v.CreatedBy, CreatedByIssuer: v.CreatedByIssuer, CreatedBySubject: v.CreatedBySubject,
		CreatedAt: v.CreatedAt.UTC(), Reason: v.Reason}
	if c.New {
		return &childWrite{insert: colsOf(contentTable, &r, identity)}
	}
	w := &childWrite{key: pick(contentTable, &r, "operation_id", "version")}
	if v.ApprovedAt != nil {
		r.ApprovedBy, r.ApprovedAt = &v.ApprovedBy, utcPtr(v.ApprovedAt)
		w.set = append(w.set, pick(contentTable, &r, "approved_by", "approved_at")...)
	}
	if v.RejectedAt != nil {
		r.RejectedBy, r.RejectedAt = &v.RejectedBy, utcPtr(v.RejectedAt)
		w.set = append(w.set, pick(contentTable, &r, "rejected_by", "rejected_at")...)
	}
	if len(w.set) == 0 {
		return nil
	}
	return w
}

// guardSQL spells casGuard over the row alias t ("" or "t."), given the SQL
// of the values: the id, the version decided on, the content version
// decided on ("" when not checked) and whether the lease must be live (""
// when it need not; a boolean expression otherwise).
func guardSQL(t, id, version, contentVersion, live string) string {
	w := t + "id = " + id + " AND " + t + "version = " + version
	if contentVersion != "" {
		w += " AND " + t + "content_version = " + contentVersion
	}
	if live != "" {
		w += " AND (NOT " + live + " OR " + t + "lease_expires_at > clock_timestamp())"
	}
	return w
}

// purgeEmptied are the state columns a content purge empties (it keeps
// the version, so the guard does not see it; content_purge.go).
var purgeEmptied = map[string]bool{"result_data": true}

// setAsDecided spells the assignment of column name on row t ("t.") from
// the values v ("v.") for an update that sends every column as decided on,
// whether its change touched it or not (the multi-row statement: one
// column list for every row). A column a content purge has emptied since
// keeps the purge: a purged operation is final, and the value sent is the
// one it was decided on, before the purge.
func setAsDecided(t, v, name string) string {
	if purgeEmptied[name] {
		return name + " = CASE WHEN " + t + "content_purged_at IS NULL THEN " + v + name + " ELSE " + t + name + " END"
	}
	return name + " = " + v + name
}

// sameField is sameValue of the values two field pointers of one column
// point at (valueOf's types), read without boxing them.
func sameField(a, b any) bool {
	switch x := a.(type) {
	case *string:
		y, ok := b.(*string)
		return ok && *x == *y
	case **string:
		y, ok := b.(**string)
		return ok && (*x == nil) == (*y == nil) && (*x == nil || **x == **y)
	case *int:
		y, ok := b.(*int)
		return ok && *x == *y
	case **int:
		y, ok := b.(**int)
		return ok && (*x == nil) == (*y == nil) && (*x == nil || **x == **y)
	case *int64:
		y, ok := b.(*int64)
		return ok && *x == *y
	case *time.Time:
		y, ok := b.(*time.Time)
		return ok && x.Equal(*y)
	case **time.Time:
		y, ok := b.(**time.Time)
		return ok && (*x == nil) == (*y == nil) && (*x == nil || (*x).Equal(**y))
	}
	return false
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
