package store

import (
	"context"
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/opshandoff/handoff/domain"
)

// List returns one page of operations, oldest first, with keyset pagination
// on (created_at, id): the cursor names the last row of the previous page.
// With NewestFirst it is (created_at, id) newest first; with RecentFirst,
// (updated_at, id), newest first. With Until the page is read the other
// way, ending at the cursor's row, and the second result is the Until of
// the page before it.
func (s *Store) List(ctx context.Context, q domain.ListQuery) ([]domain.Operation, string, error) {
	sql, args, limit, err := s.listSQL(ctx, q)
	if err != nil {
		return nil, "", err
	}
	var rows []operationRow
	if err := s.db.WithContext(ctx).Raw(sql, args...).Scan(&rows).Error; err != nil {
		return nil, "", translate(err, "operation")
	}
	cursor := func(r operationRow) string {
		if q.RecentFirst {
			return encodeCursor(r.UpdatedAt, r.ID)
		}
		return encodeCursor(r.CreatedAt, r.ID)
	}
	next := ""
	if len(rows) > limit {
		// Read forwards, the extra row says a next page exists, which
		// starts after this page's last; read backwards, it is the last
		// row of the page before.
		next = cursor(rows[limit-1])
		if q.Until != "" {
			next = cursor(rows[limit])
		}
		rows = rows[:limit]
	}
	if q.Until != "" {
		slices.Reverse(rows)
	}
	ops := make([]domain.Operation, 0, len(rows))
	for _, r := range rows {
		op, err := r.toDomain()
		if err != nil {
			return nil, "", domain.Wrap(domain.EInternal, err, "unreadable operation row")
		}
		ops = append(ops, op)
	}
	return ops, next, nil
}

// Total counts the operations matching q on every page (q's cursor and
// limit aside), reading at most most+1 of them: a count past most is
// most+1, which the desk says as "more than".
func (s *Store) Total(ctx context.Context, q domain.ListQuery, most int) (int, error) {
	sql, args, err := s.totalSQL(ctx, q, most)
	if err != nil {
		return 0, err
	}
	var n int
	if err := s.db.WithContext(ctx).Raw(sql, args...).Scan(&n).Error; err != nil {
		return 0, translate(err, "operation")
	}
	return n, nil
}

// totalSQL is Total's query: the page's query whole, ORDER BY and LIMIT
// most+1 included — the same plan the list pages are read with, stopped at
// the bound — reading the ids only, not each row's content.
func (s *Store) totalSQL(ctx context.Context, q domain.ListQuery, most int) (string, []any, error) {
	q.Cursor, q.Until, q.Limit = "", "", most
	sql, args, _, err := s.listSQL(ctx, q)
	if err != nil {
		return "", nil, err
	}
	return "SELECT COUNT(*) FROM (SELECT id " + strings.TrimPrefix(sql, "SELECT * ") + ") AS page", args, nil
}

// listSQL is List's query for q, its arguments and the page's size; the
// query asks for one row more, to tell whether a next page exists (or,
// with Until, a page before).
//
// Each order is one index read forwards or backwards: (created_at, id) is
// operations_list, and operations_desk after the queue's desk_state;
// newest first and a previous page read it backwards, and PostgreSQL and
// SQLite both scan a B-tree either way. RecentFirst's (updated_at, id) has
// no index (none of operations names updated_at: migration 00029); it
// sorts what the filter keeps, which the desk asks only of the queue's few
// items and Approvals.
func (s *Store) listSQL(ctx context.Context, q domain.ListQuery) (string, []any, int, error) {
	where, args, err := s.listWhere(ctx, q)
	if err != nil {
		return "", nil, 0, err
	}
	col, desc := "created_at", q.NewestFirst
	if q.RecentFirst {
		col, desc = "updated_at", true
	}
	// A previous page reads the order backwards from its cursor's row,
	// that row included.
	back, cur := q.Until != "", q.Cursor
	if back {
		if q.Cursor != "" {
			return "", nil, 0, domain.Invalid(domain.FieldError{Field: "until", Message: "goes with no cursor"})
		}
		desc, cur = !desc, q.Until
	}
	if cur != "" {
		at, id, err := decodeCursor(cur)
		if err != nil {
			field := "cursor"
			if back {
				field = "until"
			}
			return "", nil, 0, domain.Invalid(domain.FieldError{Field: field, Message: "is not a cursor this server issued"})
		}
		op := ">"
		if desc {
			op = "<"
		}
		if back {
			op += "="
		}
		// A row value, not "col > ? OR (col = ? AND id > ?)": both
		// databases read it as where the index scan starts, so a late page
		// costs what the first does; the OR is a filter over every row
		// before the cursor (docs/design/performance-log.md).
		where += " AND (" + col + ", id) " + op + " (?, ?)"
		args = append(args, at, id)
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 50
	}
	order := " ORDER BY " + col + ", id LIMIT ?"
	if desc {
		order = " ORDER BY " + col + " DESC, id DESC LIMIT ?"
	}
	return "SELECT * FROM operations WHERE " + where + order, append(args, limit+1), limit, nil
}

// listWhere is the condition of List's query for q, without its cursor:
// what a page of the list and the count of every page share. A search of
// the Operations page on PostgreSQL first reads which operations its text
// names exactly (exactIDs).
func (s *Store) listWhere(ctx context.Context, q domain.ListQuery) (string, []any, error) {
	where, args := []string{"1 = 1"}, []any{}
	add := func(cond string, a ...any) { where = append(where, cond); args = append(args, a...) }
	if q.Namespace != "" {
		add("namespace = ?", q.Namespace)
	}
	if q.Key != "" {
		add("key = ?", q.Key)
	}
	if len(q.States) > 0 {
		names := make([]string, len(q.States))
		for i, st := range q.States {
			names[i] = st.String()
		}
		if deskOnly(q) {
			add(deskStatesSQL, names)
		} else {
			add("state IN ?", names)
		}
	}
	if len(q.Types) > 0 {
		add("type IN ?", q.Types)
	}
	if q.EventID != "" {
		add("event_id = ?", q.EventID)
	}
	if q.CorrelationID != "" {
		add("correlation_id = ?", q.CorrelationID)
	}
	if q.Assignee != "" {
		add("assignee = ?", q.Assignee)
	}
	if a := q.HeldBy; a != nil {
		// As domain.Operation.AssignedTo.
		add("((assignee_subject <> '' AND assignee_issuer = ? AND assignee_subject = ?) OR "+
			"(assignee_subject = '' AND assignee <> '' AND LOWER(assignee) = LOWER(?)))", a.Issuer, a.Subject, a.Identity())
	}
	if q.Text != "" {
		cond, a, err := s.textMatch(ctx, q)
		if err != nil {
			return "", nil, err
		}
		add(cond, a...)
	}
	if q.Error != nil {
		add("COALESCE(last_error_class, '') = ?", q.Error.Class)
		add("COALESCE(last_error_code, '') = ?", q.Error.Code)
		if heldTwins(q) {
			// What the two conditions above say, in the words of the
			// partial index over the held twins (operations_twin_holds):
			// state is in no index of operations, so without it the
			// queue's marker of held twins read the whole table.
			add("twin_held")
		}
	}
	if !q.CreatedBefore.IsZero() {
		add("created_at < ?", q.CreatedBefore.UTC())
	}
	if !q.InDeskBefore.IsZero() {
		add("COALESCE(desk_entered_at, created_at) < ?", q.InDeskBefore.UTC())
	}
	if !q.InDeskSince.IsZero() {
		add("COALESCE(desk_entered_at, created_at) >= ?", q.InDeskSince.UTC())
	}
	if !q.EnteredSince.IsZero() {
		add("desk_entered_at >= ?", q.EnteredSince.UTC())
	}
	if !q.ResolvedSince.IsZero() {
		add("resolution_by IS NOT NULL AND resolution_at >= ?", q.ResolvedSince.UTC())
	}
	if len(q.AwaitingLookupOf) > 0 { // as domain.AwaitingLookup
		add("NOT (state = 'unknown_outcome' AND desk_entered_at IS NULL AND type IN ?)", q.AwaitingLookupOf)
	}
	return strings.Join(where, " AND "), args, nil
}

// heldTwins reports whether q lists the registrations held for a twin:
// awaiting approval with the error twin_unresolved, the rows twin_held
// names (migration 00029).
func heldTwins(q domain.ListQuery) bool {
	return q.Error != nil && q.Error.Code == domain.CodeTwinUnresolved &&
		len(q.States) == 1 && q.States[0] == domain.AwaitingApproval
}

// deskOnly reports whether q lists desk states only: then its condition is
// on desk_state (deskStatesSQL), and its search matches the result ref as
// desk_result_ref, the columns the desk's indexes are over (migration
// 00029).
func deskOnly(q domain.ListQuery) bool {
	if len(q.States) == 0 {
		return false
	}
	for _, st := range q.States {
		if !st.InDesk() {
			return false
		}
	}
	return true
}

// searchColumns are what the queue's search (and the API's q) matches a
// substring of, lowercased; deskSearchColumns the same of the desk's items,
// as 00004's trigram indexes are over them (desk_result_ref is the result
// ref of an operation in the desk).
var (
	searchColumns     = []string{"key", "event_id", "correlation_id", "provider_key", "result_ref", "last_error_message", "last_error_code"}
	deskSearchColumns = []string{"key", "event_id", "correlation_id", "provider_key", "desk_result_ref", "last_error_message", "last_error_code"}
)

// The Operations page's search (Deep) matches a substring of the text
// people remember a part of — the key, the error's message and code, the
// content — and the identifiers people paste whole exactly, ignoring case:
// the operation's ID, an attempt's ID and these.
var (
	deepTextColumns  = []string{"key", "last_error_message", "last_error_code"}
	deepExactColumns = []string{"event_id", "correlation_id", "provider_key", "result_ref"}
)

// sideSearch is, on PostgreSQL, the Operations page's search by text: a
// semi-join with the side table (migrations 00012 and 00028), whose rows
// hold the key and the content, and the error's message and code,
// lowercased, one per line (a search text without a line break cannot
// match across two of them; migration 00022). The search indexer
// (search_index.go) writes them within seconds of a change, off the write
// path. The condition on operations is one EXISTS, not an OR: the planner
// can then take it as a semi-join either way round. For a rare substring
// it reads the side table's trigram index and fetches the few operations
// by their keys; for a common one it reads operations in created_at order,
// probes the side table by key and stops at the page. (An EXISTS or IN
// under an OR is checked row by row, or materialises every match, and
// reads the whole table.)
const sideSearch = `EXISTS (SELECT 1 FROM operation_search s WHERE s.operation_id = operations.id AND s.body LIKE ? ESCAPE '\')`

// sideOrExact is sideSearch for a text that names operations exactly:
// those, and the side table's matches, as one IN over both. It is planned
// as the rare substring is (the side table's index, then the operations by
// their keys): a text that is an identifier is rarely part of many texts.
const sideOrExact = `operations.id IN (SELECT s.operation_id FROM operation_search s WHERE s.body LIKE ? ESCAPE '\' ` +
	`UNION ALL SELECT o.id FROM operations o WHERE o.id IN ?)`

// exactMatch names, on PostgreSQL, the operations a text ($1) names
// exactly, from operations and attempts themselves, so that an operation
// is found by them as soon as it is written: its ID and an attempt's
// through the primary keys (the attempt's operation is a scalar subquery,
// evaluated once); its identifiers, in any case, through migration 00025's
// hash indexes, whose predicates (the value not empty) each arm repeats so
// that the planner may take them, and the result ref through
// final_operations' hash index (00030: only a completed operation has
// one); and its key, as written, through the
// (namespace, key) unique index, probed once per namespace, each of which
// a recursive scan of that index finds in one probe.
var exactMatch = `SELECT o.id FROM operations o WHERE ` + exactCond + ` LIMIT ` + strconv.Itoa(exactMost+1)

// exactCond is exactMatch's condition on operations o, its text $1.
const exactCond = `o.id = $1 OR o.id = (SELECT operation_id FROM attempts WHERE id = $1) OR ` +
	`(o.event_id <> '' AND lower(o.event_id) = lower($1)) OR (o.correlation_id <> '' AND lower(o.correlation_id) = lower($1)) OR ` +
	`(o.provider_key <> '' AND lower(o.provider_key) = lower($1)) OR ` +
	`o.id = ANY (ARRAY(SELECT f.id FROM final_operations f WHERE f.result_ref = lower($1))) OR ` +
	`(o.key = $1 AND o.namespace = ANY (ARRAY(WITH RECURSIVE ns (n) AS (SELECT min(namespace) FROM operations UNION ALL ` +
	`SELECT (SELECT min(namespace) FROM operations WHERE namespace > ns.n) FROM ns WHERE ns.n IS NOT NULL) ` +
	`SELECT n FROM ns WHERE n IS NOT NULL)))`

// exactMost is how many operations exactIDs hands to the list's query as
// values (each one a parameter of its IN). A text that names more — a
// correlation ID a large run shares — is matched by exactCond inside the
// list's query instead (sideOrExactCond), which finds every one of them.
const exactMost = 1000

// sideOrExactCond is sideOrExact with exactCond in place of the IDs it
// names, its text once per "?".
var sideOrExactCond = `operations.id IN (SELECT s.operation_id FROM operation_search s WHERE s.body LIKE ? ESCAPE '\' ` +
	`UNION ALL SELECT o.id FROM operations o WHERE ` + strings.ReplaceAll(exactCond, "$1", "?") + `)`

// exactIDs are the operations q's text names exactly (exactMatch). It
// reads through the pgx pool, outside the list's transaction: a prepared
// statement whose plan PostgreSQL keeps (planning it for each search,
// with every index of operations to weigh for each arm, cost more than
// running it), where the list's own query is planned for its values.
func (s *Store) exactIDs(ctx context.Context, text string) ([]string, error) {
	var ids []string
	var err error
	if s.pool != nil {
		var rows pgx.Rows
		if rows, err = s.pool.Query(ctx, exactMatch, text); err == nil {
			ids, err = pgx.CollectRows(rows, pgx.RowTo[string])
		}
	} else {
		err = s.db.WithContext(ctx).Raw(exactMatch, text).Scan(&ids).Error
	}
	if err != nil {
		return nil, translate(err, "operation")
	}
	return ids, nil
}

// textMatch is the search's condition. On PostgreSQL each of its arms can be
// read from an index: migration 00004's trigram indexes for the desk's
// search; for the Operations page's, the side table's trigram index
// (sideSearch) and, for the operations its text names exactly, the indexes
// exactIDs reads. A text with a line break, and every search on SQLite, is
// matched column by column, the same way, from operations itself: at once,
// with no side table. The exact operation and attempt IDs are found
// through the primary keys; the attempt's operation is a scalar subquery,
// evaluated once, rather than IN (…): an IN inside an OR is checked row by
// row, and that makes PostgreSQL read the whole table.
//
// The content of q.ContentHiddenTypes is not searched: the side table
// holds it in the same row as the key, so operations of those types are
// matched column by column instead.
func (s *Store) textMatch(ctx context.Context, q domain.ListQuery) (string, []any, error) {
	pat := "%" + escapeLike(strings.ToLower(q.Text)) + "%"
	hidden := q.ContentHiddenTypes
	if q.Deep && s.dialect.searchSide() && !strings.Contains(q.Text, "\n") {
		exact, err := s.exactIDs(ctx, q.Text)
		if err != nil {
			return "", nil, err
		}
		side, sideArgs := sideSearch, []any{pat}
		switch {
		case len(exact) > exactMost:
			side, sideArgs = sideOrExactCond, []any{pat}
			for range strings.Count(exactCond, "$1") {
				sideArgs = append(sideArgs, q.Text)
			}
		case len(exact) > 0:
			side, sideArgs = sideOrExact, []any{pat, exact}
		}
		if len(hidden) == 0 {
			return side, sideArgs, nil
		}
		cols, args := columnMatch(q, pat)
		return "((type NOT IN ? AND " + side + ") OR (type IN ? AND " + cols + "))",
			append(append(append([]any{hidden}, sideArgs...), hidden), args...), nil
	}
	cols, args := columnMatch(q, pat)
	if q.Deep && len(hidden) > 0 {
		return "(" + cols + " OR (type NOT IN ? AND LOWER(content) LIKE ? ESCAPE '\\'))", append(args, hidden, pat), nil
	}
	if q.Deep {
		return "(" + cols + " OR LOWER(content) LIKE ? ESCAPE '\\')", append(args, pat), nil
	}
	return cols, args, nil
}

// columnMatch matches pat in the searched columns and, for a deep search,
// the identifiers whole and the operation or an attempt by its ID.
func columnMatch(q domain.ListQuery, pat string) (string, []any) {
	var ors []string
	var args []any
	substr := searchColumns
	if deskOnly(q) {
		substr = deskSearchColumns
	}
	if q.Deep {
		substr = deepTextColumns
	}
	for _, c := range substr {
		ors, args = append(ors, "LOWER(COALESCE("+c+", '')) LIKE ? ESCAPE '\\'"), append(args, pat)
	}
	if q.Deep {
		for _, c := range deepExactColumns {
			ors, args = append(ors, "LOWER(COALESCE("+c+", '')) = LOWER(?)"), append(args, q.Text)
		}
		ors = append(ors, "id = ?", "id = (SELECT operation_id FROM attempts WHERE id = ?)")
		args = append(args, q.Text, q.Text)
	}
	return "(" + strings.Join(ors, " OR ") + ")", args
}

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UTC().UnixNano(), 10) + "|" + id))
}

func decodeCursor(c string) (time.Time, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", err
	}
	ns, id, ok := strings.Cut(string(raw), "|")
	n, err := strconv.ParseInt(ns, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", domain.Errorf(domain.EInvalid, "bad cursor")
	}
	return time.Unix(0, n).UTC(), id, nil
}
