package store

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// clock is the database's clock: PostgreSQL's, or the process's for SQLite.
func (s *Store) clock(ctx context.Context) (time.Time, error) {
	if s.dialect != "postgres" {
		return s.now().UTC(), nil
	}
	var now time.Time
	if err := s.db.WithContext(ctx).Raw("SELECT clock_timestamp()").Row().Scan(&now); err != nil {
		return time.Time{}, translate(err, "clock")
	}
	return now.UTC(), nil
}

// cumulative builds "COALESCE(SUM(CASE WHEN col > ? THEN 1 ELSE 0 END), 0)"
// for each bound: how many rows are newer than each bound.
func cumulative(col string, bounds []time.Time) (string, []any) {
	parts, args := make([]string, len(bounds)), make([]any, len(bounds))
	for i, b := range bounds {
		parts[i] = fmt.Sprintf("COALESCE(SUM(CASE WHEN %s > ? THEN 1 ELSE 0 END), 0)", col)
		args[i] = b
	}
	return strings.Join(parts, ", "), args
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

// DeskCounts implements domain.DeskStore: the desk index answers it.
func (s *Store) DeskCounts(ctx context.Context) (map[domain.State]int, error) {
	var counts []struct {
		State string
		N     int
	}
	err := s.db.WithContext(ctx).Raw("SELECT state, COUNT(*) AS n FROM operations WHERE state IN ? GROUP BY state",
		deskStateNames()).Scan(&counts).Error
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

// DeskSummary implements domain.DeskStore.
func (s *Store) DeskSummary(ctx context.Context, bands []time.Duration, window time.Duration, latest int) (domain.DeskSummary, error) {
	now, err := s.clock(ctx)
	if err != nil {
		return domain.DeskSummary{}, err
	}
	sum := domain.DeskSummary{Now: now, ByState: map[domain.State]int{}}

	var counts []struct {
		State string
		N     int
	}
	if err := s.db.WithContext(ctx).Raw("SELECT state, COUNT(*) AS n FROM operations GROUP BY state").Scan(&counts).Error; err != nil {
		return sum, translate(err, "desk summary")
	}
	for _, c := range counts {
		if st, err := domain.ParseState(c.State); err == nil {
			sum.ByState[st] = c.N
		}
	}

	// Ages: count the items newer than each bound, then take differences.
	var bounds []time.Time
	for _, b := range bands {
		if b > 0 {
			bounds = append(bounds, now.Add(-b))
		}
	}
	cols, args := cumulative("COALESCE(desk_entered_at, created_at)", bounds) // an item's age counts from desk entry
	age, err := s.scanCounts(ctx, len(bounds)+1, "SELECT COUNT(*), "+cols+" FROM operations WHERE state IN ?",
		append(args, deskStateNames())...)
	if err != nil {
		return sum, err
	}
	sum.AgeBands = differences(age[1:], age[0], len(bands))

	// Entries: events that moved an operation into the desk from elsewhere.
	hours := int(window / time.Hour)
	bounds = bounds[:0]
	for k := 1; k <= hours; k++ {
		bounds = append(bounds, now.Add(-time.Duration(k)*time.Hour))
	}
	cols, args = cumulative("at", bounds)
	entered := "FROM audit_events WHERE at > ? AND to_state IN ? AND from_state NOT IN ?"
	desk := deskStateNames()
	per, err := s.scanCounts(ctx, hours, "SELECT "+cols+" "+entered, append(args, now.Add(-window), desk, desk)...)
	if err != nil {
		return sum, err
	}
	newestFirst := differences(per, per[len(per)-1], hours)
	sum.PerHour = make([]int, hours)
	for i, n := range newestFirst[:hours] {
		sum.PerHour[hours-1-i] = n
	}
	sum.Entered = int(per[len(per)-1])

	var rows []struct {
		OperationID string
		At          time.Time
		ToState     string
		Key         string
		Type        string
	}
	err = s.db.WithContext(ctx).Raw("SELECT e.operation_id, e.at, e.to_state, o.key, o.type FROM audit_events e "+
		"JOIN operations o ON o.id = e.operation_id WHERE e.at > ? AND e.to_state IN ? AND e.from_state NOT IN ? "+
		"ORDER BY e.pos DESC LIMIT ?", now.Add(-window), desk, desk, latest).Scan(&rows).Error
	if err != nil {
		return sum, translate(err, "desk summary")
	}
	for _, r := range rows {
		st, _ := domain.ParseState(r.ToState)
		sum.Latest = append(sum.Latest, domain.DeskEntry{OperationID: r.OperationID, Key: r.Key, Type: r.Type, State: st, At: r.At.UTC()})
	}
	return sum, nil
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
// (170 ms instead of 2 on the benchmark's 100,000 operations).
func (s *Store) DeskList(ctx context.Context, q domain.ListQuery) ([]domain.Operation, string, error) {
	if s.dialect != "postgres" || q.Text == "" {
		return s.List(ctx, q)
	}
	var ops []domain.Operation
	var next string
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL plan_cache_mode = force_custom_plan").Error; err != nil {
			return err
		}
		in := *s
		in.db = tx
		var err error
		ops, next, err = in.List(ctx, q)
		return err
	})
	if err != nil {
		return nil, "", translate(err, "operation")
	}
	return ops, next, nil
}

// DeskTotal implements domain.DeskStore: Total, planned as DeskList is.
func (s *Store) DeskTotal(ctx context.Context, q domain.ListQuery, most int) (int, error) {
	if s.dialect != "postgres" || q.Text == "" {
		return s.Total(ctx, q, most)
	}
	var n int
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Exec("SET LOCAL plan_cache_mode = force_custom_plan").Error; err != nil {
			return err
		}
		in := *s
		in.db = tx
		var err error
		n, err = in.Total(ctx, q, most)
		return err
	})
	if err != nil {
		return 0, translate(err, "operation")
	}
	return n, nil
}

// loadBatch is how many rows one INSERT carries when bulk loading.
const loadBatch = 500

// CreateBatch writes many new operations with their events and content
// snapshots and new attempts, a batch of rows per INSERT, in one transaction. Unlike Create
// it does not look for existing keys: a taken key fails the whole load. It
// vacuums and analyzes the table afterwards. It is for loading data sets such as the desk's benchmark, where one commit
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
	// What a bulk load ends with, and autovacuum would do some time later:
	// statistics, so the planner does not guess from none, and on PostgreSQL
	// a vacuum, which also merges the GIN indexes' pending lists (a search
	// would otherwise read every row loaded since, one by one) — those of
	// operations and of the search's side table (migration 00012), which
	// the load filled through its triggers.
	sql := "ANALYZE operations"
	if s.dialect == "postgres" {
		sql = "VACUUM (ANALYZE) operations, operation_search"
	}
	return translate(s.db.WithContext(ctx).Exec(sql).Error, "operation")
}

var _ domain.IncidentStore = (*Store)(nil)

// DeskSignatures implements domain.IncidentStore: the desk's items with
// what incidents group them by, read in one pass over the desk states.
func (s *Store) DeskSignatures(ctx context.Context) ([]domain.DeskItemSignature, error) {
	var rows []struct {
		Type             string
		Namespace        string
		State            string
		LastErrorClass   *string
		LastErrorCode    *string
		LastErrorMessage *string
		CreatedAt        time.Time
		UpdatedAt        time.Time
	}
	err := s.db.WithContext(ctx).Table("operations").
		Select("type, namespace, state, last_error_class, last_error_code, last_error_message, created_at, updated_at").
		Where("state IN ?", deskStateNames()).Order("created_at, id").Scan(&rows).Error
	if err != nil {
		return nil, translate(err, "desk incidents")
	}
	out := make([]domain.DeskItemSignature, len(rows))
	for i, r := range rows {
		st, _ := domain.ParseState(r.State)
		out[i] = domain.DeskItemSignature{Type: r.Type, Namespace: r.Namespace, State: st,
			Error:   domain.ErrorKind{Class: deref(r.LastErrorClass), Code: deref(r.LastErrorCode)},
			Message: deref(r.LastErrorMessage), Since: r.CreatedAt.UTC(), Updated: r.UpdatedAt.UTC()}
	}
	return out, nil
}
