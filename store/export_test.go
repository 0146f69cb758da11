package store

import (
	"context"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

// CreateTogether commits the new operations' changes as one group-commit
// flush, as if they had arrived at once, and returns each one's answer:
// whether it was created, or its error.
func CreateTogether(s *Store, chs []domain.Change) ([]bool, []error) {
	batch := make([]*commitRequest, len(chs))
	for i, ch := range chs {
		batch[i] = &commitRequest{p: planCreate(ch), done: make(chan commitResult, 1)}
	}
	s.commits.flush(batch, func() {})
	created, errs := make([]bool, len(chs)), make([]error, len(chs))
	for i, r := range batch {
		res := <-r.done
		created[i], errs[i] = res.n == 1, res.err
	}
	return created, errs
}

// CreateTogetherObserved is CreateTogether that also reports, at the
// moment the flush let go of its turn, how many of its callers had been
// answered already, and how many times it let go.
func CreateTogetherObserved(s *Store, chs []domain.Change) (answeredAtRelease, releases int, errs []error) {
	batch := make([]*commitRequest, len(chs))
	for i, ch := range chs {
		batch[i] = &commitRequest{p: planCreate(ch), done: make(chan commitResult, 1)}
	}
	answeredAtRelease = -1
	s.commits.flush(batch, func() {
		releases++
		answeredAtRelease = 0
		for _, r := range batch {
			answeredAtRelease += len(r.done)
		}
	})
	errs = make([]error, len(chs))
	for i, r := range batch {
		errs[i] = (<-r.done).err
	}
	return answeredAtRelease, releases, errs
}

// FastPath reports whether the store writes ch in one statement.
func FastPath(s *Store, ch domain.Change) bool {
	return s.pool != nil && planChange(ch).route != routeTx
}

// MigrateTo migrates s's database up to version v only.
func MigrateTo(ctx context.Context, s *Store, v int64) error {
	p, err := s.provider(true)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, v)
	return err
}

// MigrateDownTo migrates s's database down to version v.
func MigrateDownTo(ctx context.Context, s *Store, v int64) error {
	p, err := s.provider(true)
	if err != nil {
		return err
	}
	_, err = p.DownTo(ctx, v)
	return err
}

// Exec runs a statement on s's database, for tests that set up rows an
// older schema holds.
func Exec(ctx context.Context, s *Store, sql string, args ...any) error {
	return s.db.WithContext(ctx).Exec(sql, args...).Error
}

// ApplyTogether commits the changes of existing operations as one
// group-commit flush and returns each one's answer: whether it was
// written, or its error.
func ApplyTogether(s *Store, chs []domain.Change) ([]bool, []error) {
	batch := make([]*commitRequest, len(chs))
	for i, ch := range chs {
		batch[i] = &commitRequest{p: planChange(ch), done: make(chan commitResult, 1)}
	}
	s.commits.flush(batch, func() {})
	written, errs := make([]bool, len(chs)), make([]error, len(chs))
	for i, r := range batch {
		res := <-r.done
		written[i], errs[i] = res.n == 1, res.err
	}
	return written, errs
}

// MultiRow reports how a flush of these changes is sent: the number of
// changes in each multi-row statement, 0 for a statement of its own.
func MultiRow(chs []domain.Change, create bool) []int {
	batch := make([]*commitRequest, len(chs))
	for i, ch := range chs {
		p := planChange(ch)
		if create {
			p = planCreate(ch)
		}
		batch[i] = &commitRequest{p: p}
	}
	var out []int
	for _, p := range planFlush(batch) {
		if p.multi {
			out = append(out, len(p.idx))
		} else {
			out = append(out, 0)
		}
	}
	return out
}

// Reruns is how many flushes failed whole and were re-run change by change.
func Reruns(s *Store) int64 { return s.commits.reruns.Load() }

// FlushWriters is how many group-commit writers s runs, and the most flushes
// that have run at once.
func FlushWriters(s *Store) (writers int, mostInFlight int64) {
	return s.commits.writers, s.commits.mostInFlight.Load()
}

// StallAfter sets how long a group-commit flush may run before another
// starts beside it (stallAfter).
func StallAfter(d time.Duration) Option { return func(o *options) { o.stall = d } }

// SetMultiRow turns the multi-row statements on or off, for the benchmark
// that compares them with a statement per change.
func SetMultiRow(on bool) { multiRowOn = on }

// ExplainList is PostgreSQL's plan for List's query for q, planned for its
// values, with the settings (such as "enable_seqscan = off") in force.
func ExplainList(s *Store, q domain.ListQuery, settings ...string) (string, error) {
	sql, args, _, err := s.listSQL(context.Background(), q)
	if err != nil {
		return "", err
	}
	return explain(s, sql, args, settings)
}

// ExplainTotal is PostgreSQL's plan for Total's query for q, with the
// settings in force.
func ExplainTotal(s *Store, q domain.ListQuery, most int, settings ...string) (string, error) {
	sql, args, err := s.totalSQL(context.Background(), q, most)
	if err != nil {
		return "", err
	}
	return explain(s, sql, args, settings)
}

// ExplainDeskCount is PostgreSQL's plan for DeskCount's query, with the
// settings in force.
func ExplainDeskCount(s *Store, q domain.ListQuery, most int, settings ...string) (string, error) {
	sql, args, err := s.deskCountSQL(context.Background(), q, most)
	if err != nil {
		return "", err
	}
	return explain(s, sql, args, settings)
}

// ExplainExact is PostgreSQL's plan for the query that finds the
// operations a search text names exactly (exactIDs), with the settings in
// force.
func ExplainExact(s *Store, text string, settings ...string) (string, error) {
	return explain(s, exactMatch, []any{text}, settings)
}

func explain(s *Store, sql string, args []any, settings []string) (string, error) {
	var plan []string
	err := s.db.Transaction(func(tx *gorm.DB) error {
		for _, set := range append([]string{"plan_cache_mode = force_custom_plan"}, settings...) {
			if err := tx.Exec("SET LOCAL " + set).Error; err != nil {
				return err
			}
		}
		return tx.Raw("EXPLAIN "+sql, args...).Scan(&plan).Error
	})
	return strings.Join(plan, "\n"), err
}

// SearchRow is a row of migration 00012's side table on PostgreSQL: the
// part of the operation's searched text, the text, and the transaction
// that wrote it (xmin), which a write that changes nothing still renews.
type SearchRow struct {
	Part       int
	Body, Xmin string
}

// SearchSide is the operation's rows in the side table, by part.
func SearchSide(ctx context.Context, s *Store, id string) ([]SearchRow, error) {
	var rows []SearchRow
	err := s.db.WithContext(ctx).Raw("SELECT part, body, xmin::text AS xmin FROM operation_search WHERE operation_id = ? ORDER BY part",
		id).Scan(&rows).Error
	return rows, err
}

// SearchExact is the operation's values in migration 00022's table of
// identifiers (which 00025 drops), sorted.
func SearchExact(ctx context.Context, s *Store, id string) ([]string, error) {
	var vals []string
	err := s.db.WithContext(ctx).Raw("SELECT value FROM operation_search_exact WHERE operation_id = ? ORDER BY value", id).
		Scan(&vals).Error
	return vals, err
}

// Loads is how many operations the store has read by id or key on
// PostgreSQL (the lease cache's clock readings).
func Loads(s *Store) int64 { return s.leases.loads.Load() }

// ForgetLeased drops the operation from the lease cache.
func ForgetLeased(s *Store, id string) { s.leases.forget(id) }

// OpColumns are the columns of operations the store writes and reads.
var OpColumns = opColumns

// SchemaColumns are schema.go's tables and their columns.
func SchemaColumns() map[string][]string {
	names := func(s string) []string { return strings.Split(s, ", ") }
	return map[string][]string{
		"operations":       append(names(opColumns), opGenerated...),
		"audit_events":     names(auditColumns),
		"attempts":         names(columnNames(attemptTable, identity, state)),
		"content_versions": names(columnNames(contentTable, identity, state)),
		"notifications":    names(columnNames(outboxTable, identity, state)),
	}
}

// DBColumns are the columns the database's table has.
func DBColumns(s *Store, table string) ([]string, error) {
	cts, err := s.db.Migrator().ColumnTypes(table)
	out := make([]string, len(cts))
	for i, c := range cts {
		out[i] = c.Name()
	}
	return out, err
}

// WriteVia writes the changes (all new operations when create) through one
// renderer, as far as their plans' routes allow: "tx" writes each in a GORM
// transaction; "single" each route-single or route-multi plan as its own
// statement; "multi" every route-multi plan in one multi-row statement, in
// one transaction with the route-single plans' statements (and, as
// planFlush does, a later registration held for no twin of a content
// already there). A plan the renderer may not take is written by the next
// one that may. It returns each change's answer: written (or created), or
// its error.
func WriteVia(s *Store, via string, chs []domain.Change, create bool) ([]bool, []error) {
	ctx := context.Background()
	written, errs := make([]bool, len(chs)), make([]error, len(chs))
	var batch []*commitRequest
	var at []int
	for i, ch := range chs {
		p := planChange(ch)
		if create {
			p = planCreate(ch)
		}
		if via == "tx" || p.route == routeTx || s.pool == nil {
			errs[i] = translate(s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
				var err error
				written[i], err = writeTx(tx, p)
				return err
			}), "operation")
			continue
		}
		batch, at = append(batch, &commitRequest{p: p, done: make(chan commitResult, 1)}), append(at, i)
	}
	if len(batch) == 0 {
		return written, errs
	}
	if via == "single" {
		for j, r := range batch {
			res := s.commits.commitOne(ctx, r)
			written[at[j]], errs[at[j]] = res.n == 1, res.err
		}
		return written, errs
	}
	var parts []flushPart
	multi := flushPart{multi: true, create: create}
	turns := map[string]bool{}
	for j, r := range batch {
		turn := twinTurn(r.p)
		if r.p.route == routeMulti && (turn == "" || !turns[turn]) {
			turns[turn] = true
			multi.idx = append(multi.idx, j)
		} else {
			parts = append(parts, flushPart{idx: []int{j}, create: create})
		}
	}
	if len(multi.idx) > 0 {
		parts = append([]flushPart{multi}, parts...)
	}
	ns, err := s.commits.commitBatch(ctx, batch, parts)
	for j := range batch {
		written[at[j]], errs[at[j]] = err == nil && ns[j] == 1, translate(err, "operation")
	}
	return written, errs
}

// TableRows are every row of the table as PostgreSQL's JSON text, in
// order, less the columns named: what two databases must hold byte for
// byte to be equal.
func TableRows(s *Store, table string, less ...string) ([]string, error) {
	j := "to_jsonb(t)"
	for _, c := range less {
		j += " - '" + c + "'"
	}
	var rows []string
	err := s.db.Raw("SELECT (" + j + ")::text AS j FROM " + table + " t ORDER BY 1").Scan(&rows).Error
	return rows, err
}

// QueuedWrites is how many changes wait for a group-commit flush: queued,
// or held by a writer that waits for its turn.
func QueuedWrites(s *Store) int { return len(s.commits.reqs) + int(s.commits.held.Load()) }

// Every statement taken from the cache is checked against a fresh
// rendering in this package's tests.
func init() { verifyStatementCache = true }

// VerifyStatementCache sets the cache's self-check and returns what puts
// it back.
func VerifyStatementCache(on bool) (restore func()) {
	was := verifyStatementCache
	verifyStatementCache = on
	return func() { verifyStatementCache = was }
}

// RenderSingle renders the change as its single statement, as a flush of
// it alone does: its text and its number of arguments.
func RenderSingle(ch domain.Change, create bool) (string, int) {
	r := &commitRequest{p: planOf(ch, create)}
	st := singleStatement(r.p)
	return st.query(), len(st.args)
}

// RenderMulti renders the changes (all creates or all updates) as one
// multi-row statement, as a flush of them together does.
func RenderMulti(chs []domain.Change, create bool) (string, int) {
	plans := make([]*writePlan, len(chs))
	for i, ch := range chs {
		plans[i] = (&commitRequest{p: planOf(ch, create)}).p
	}
	st := multiStatement(plans)
	return st.query(), len(st.args)
}

// IndexSearchSQL is one batch of the search indexer, run in a transaction
// that holds its turn, its one parameter (the batch's size) written "?".
const IndexSearchSQL = indexSearchSQL

// QueryRow scans the one row of a query on s's database into dest.
func QueryRow(ctx context.Context, s *Store, sql string, dest []any, args ...any) error {
	return s.db.WithContext(ctx).Raw(sql, args...).Row().Scan(dest...)
}
