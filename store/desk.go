package store

import (
	"context"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// The desk's reads: summaries over all operations. Counting is done with portable SUM(CASE …) expressions so the
// same SQL runs on PostgreSQL and SQLite.

var _ domain.DeskStore = (*Store)(nil)

// deskStateNames are the desk's states as the table holds them.
func deskStateNames() []string {
	out := make([]string, len(domain.DeskStates))
	for i, s := range domain.DeskStates {
		out[i] = s.String()
	}
	return out
}

// scanCounts runs a one-row query of n counts.
func (s *Store) scanCounts(ctx context.Context, n int, sql string, args ...any) ([]int64, error) {
	out := make([]int64, n)
	dest := make([]any, n)
	for i := range out {
		dest[i] = &out[i]
	}
	if err := s.db.WithContext(ctx).Raw(sql, args...).Row().Scan(dest...); err != nil {
		return nil, translate(err, "desk summary")
	}
	return out, nil
}

// deskStatesSQL is the condition on operations in the desk states named
// by its one argument: desk_state is the state of an operation in the desk
// and NULL for every other (migration 00029), and the desk's indexes are
// partial over desk_state IS NOT NULL, which the condition spells so that
// a plan for any argument may read them.
const deskStatesSQL = "desk_state IS NOT NULL AND desk_state IN ?"

// DeskCounts implements domain.DeskStore: the desk index answers it.
func (s *Store) DeskCounts(ctx context.Context, awaitingLookupOf []string) (map[domain.State]int, error) {
	var counts []struct {
		State string
		N     int
	}
	sql, args := "SELECT desk_state AS state, COUNT(*) AS n FROM operations WHERE "+deskStatesSQL, []any{deskStateNames()}
	if len(awaitingLookupOf) > 0 { // as List's AwaitingLookupOf
		sql += " AND NOT (state = 'unknown_outcome' AND desk_entered_at IS NULL AND type IN ?)"
		args = append(args, awaitingLookupOf)
	}
	err := s.db.WithContext(ctx).Raw(sql+" GROUP BY desk_state", args...).Scan(&counts).Error
	if err != nil {
		return nil, translate(err, "desk counts")
	}
	out := map[domain.State]int{}
	for _, c := range counts {
		if st, err := domain.ParseState(c.State); err == nil {
			out[st] = c.N
		}
	}
	return out, nil
}

// differences turns cumulative counts (rows newer than each successively
// older bound) into per-band counts; total counts every row, so the last
// band is what is older than the last bound.
func differences(cum []int64, total int64, n int) []int {
	out := make([]int, n)
	var prev int64
	for i := range n {
		c := total
		if i < len(cum) {
			c = cum[i]
		}
		out[i] = int(c - prev)
		prev = c
	}
	return out
}

// DeskList implements domain.DeskStore: List, with a plan made for this
// search's own values. The queue's searches are one SQL text with changing
// parameters; after five runs PostgreSQL may settle on one generic plan, and
// a generic plan cannot use the partial trigram indexes of migration 00004 —
// their predicate names the desk's states, which the generic plan only sees
// as parameters — so it reads the operations one by one in created_at order
// (docs/design/performance-log.md).
func (s *Store) DeskList(ctx context.Context, q domain.ListQuery) ([]domain.Operation, string, error) {
	if !s.dialect.searchSide() || q.Text == "" {
		return s.List(ctx, q)
	}
	var ops []domain.Operation
	var next string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL plan_cache_mode = force_custom_plan").Error; err != nil {
			return err
		}
		in := *s
		in.conn = s.conn.in(tx) // not in.db: the conn is shared
		var err error
		ops, next, err = in.List(ctx, q)
		return err
	})
	if err != nil {
		return nil, "", translate(err, "operation")
	}
	return ops, next, nil
}

// DeskCount implements domain.DeskStore: how many operations List's pages
// would give for q, its cursor and limit aside, reading at most most+1 of
// them (a count past most is most+1, which the desk says as "more than");
// most <= 0 counts them all. On PostgreSQL a search is planned for its own
// values, as in DeskList.
func (s *Store) DeskCount(ctx context.Context, q domain.ListQuery, most int) (int, error) {
	sql, args, err := s.deskCountSQL(ctx, q, most)
	if err != nil {
		return 0, err
	}
	var n int64
	count := func(db *gorm.DB) error { return db.Raw(sql, args...).Row().Scan(&n) }
	if !s.dialect.searchSide() || q.Text == "" {
		err = count(s.db.WithContext(ctx))
	} else {
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			if err := tx.Exec("SET LOCAL plan_cache_mode = force_custom_plan").Error; err != nil {
				return err
			}
			return count(tx)
		})
	}
	if err != nil {
		return 0, translate(err, "operation")
	}
	return int(n), nil
}

// deskCountSQL is DeskCount's query and its arguments.
func (s *Store) deskCountSQL(ctx context.Context, q domain.ListQuery, most int) (string, []any, error) {
	q.Cursor, q.Until = "", ""
	where, args, err := s.listWhere(ctx, q)
	if err != nil {
		return "", nil, err
	}
	if most <= 0 {
		return "SELECT COUNT(*) FROM operations WHERE " + where, args, nil
	}
	// The page's order and a LIMIT of most+1: the plan the list pages are
	// read with, stopped at the bound, reading ids only.
	return "SELECT COUNT(*) FROM (SELECT id FROM operations WHERE " + where +
		" ORDER BY created_at, id LIMIT ?) AS page", append(args, most+1), nil
}

// loadBatch is how many rows one INSERT carries when bulk loading.
const loadBatch = 500

// CreateBatch writes many new operations with their events and content
// snapshots and new attempts, a batch of rows per INSERT, in one transaction. Unlike Create
// it does not look for existing keys: a taken key fails the whole load. It
// indexes the search text of what it loaded (IndexSearch) and vacuums and
// analyzes the table afterwards. It is for loading data sets such as the desk's benchmark, where one commit
// per operation would take longer than the measurement.
func (s *Store) CreateBatch(ctx context.Context, changes []domain.Change) error {
	ops := make([]operationRow, 0, len(changes))
	var events []auditRow
	var contents []contentRow
	var attempts []attemptRow
	for _, ch := range changes {
		ops = append(ops, toOperationRow(ch.Op))
		if a := ch.Attempt; a != nil && a.New {
			attempts = append(attempts, toAttemptRow(a.Attempt))
		}
		for _, e := range ch.Events {
			events = append(events, toAuditRow(e))
		}
		if c := ch.Content; c != nil && c.New {
			v := c.Version
			contents = append(contents, contentRow{OperationID: v.OperationID, Version: v.Version, Content: string(v.Content),
				SHA256: v.SHA256, CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt.UTC(), Reason: v.Reason})
		}
	}
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.CreateInBatches(&ops, loadBatch).Error; err != nil {
			return err
		}
		if len(attempts) > 0 {
			if err := tx.CreateInBatches(&attempts, loadBatch).Error; err != nil {
				return err
			}
		}
		if len(contents) > 0 {
			if err := tx.CreateInBatches(&contents, loadBatch).Error; err != nil {
				return err
			}
		}
		if len(events) > 0 {
			return tx.CreateInBatches(&events, loadBatch).Error
		}
		return nil
	})
	if err != nil {
		return translate(err, "operation")
	}
	// What a bulk load ends with, and the replicas' search indexers and
	// autovacuum would do some time later: the search text of what it
	// loaded (migration 00028), statistics, so the planner does not guess
	// from none, and on PostgreSQL a vacuum, which also merges the GIN
	// indexes' pending lists (a search would otherwise read every row
	// loaded since, one by one) — those of operations and of the search's
	// side table (migration 00012) — and analyzes 00029's side tables,
	// which the load filled through its trigger.
	for s.dialect.isPostgres() {
		n, err := s.indexSearch(ctx, loadBatch, true)
		if err != nil {
			return err
		}
		if n < loadBatch {
			break
		}
	}
	sql := "ANALYZE operations"
	if s.dialect.isPostgres() {
		sql = "VACUUM (ANALYZE) operations, operation_search, open_operations, final_operations"
	}
	return translate(s.db.WithContext(ctx).Exec(sql).Error, "operation")
}

var _ domain.IncidentStore = (*Store)(nil)
