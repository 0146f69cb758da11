package store

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
	"gorm.io/gorm"
)

var _ domain.OverviewStore = (*Store)(nil)

// Overview implements domain.OverviewStore: every figure read in one
// read-only transaction — REPEATABLE READ on PostgreSQL, on SQLite a
// deferred transaction whose first read fixes the WAL snapshot — so no
// change lands between two of them and they add up. The figures' meanings
// are domain.Overview's; each condition here is the one store.List applies
// for the list the figure links to.
func (s *Store) Overview(ctx context.Context, q domain.OverviewQuery) (domain.Overview, error) {
	opts := &sql.TxOptions{ReadOnly: true, Isolation: s.dialect.snapshotIsolation()}
	var out domain.Overview
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = newStore(s.conn.in(tx)).overview(ctx, q)
		return err
	}, opts)
	if err != nil {
		return domain.Overview{}, translate(err, "overview")
	}
	return out, nil
}

// scope is an overview's conditions on operations: its type, if any.
type scope struct {
	where string
	args  []any
}

func (sc scope) and(cond string, a ...any) scope {
	return scope{sc.where + " AND " + cond, append(slices.Clone(sc.args), a...)}
}

func (s *Store) overview(ctx context.Context, q domain.OverviewQuery) (domain.Overview, error) {
	now, err := s.clock(ctx)
	if err != nil {
		return domain.Overview{}, err
	}
	out := domain.Overview{Now: now, ByState: map[domain.State]int{}}
	all := scope{where: "1 = 1"}
	if q.Type != "" {
		all = all.and("type = ?", q.Type)
	}
	// As store.List's AwaitingLookupOf: an unknown outcome awaiting
	// Handoff's own lookup is on no person's list yet.
	const awaiting = "state = 'unknown_outcome' AND desk_entered_at IS NULL AND type IN ?"
	listed := all
	if len(q.AwaitingLookupOf) > 0 {
		listed = all.and("NOT ("+awaiting+")", q.AwaitingLookupOf)
	}
	desk := listed.and(deskStatesSQL, deskStateNames())
	db := s.db.WithContext(ctx)

	// By state; then the items awaiting the lookup, from their own
	// partial index (migration 00015), taken out.
	var states []struct {
		State string
		N     int
	}
	names := make([]string, len(domain.States))
	for i, st := range domain.States {
		names[i] = st.String()
	}
	byState := all.and("state IN ?", names) // every operation read: state is in no index since 00029
	if err := db.Raw("SELECT state, COUNT(*) AS n FROM operations WHERE "+byState.where+" GROUP BY state", byState.args...).Scan(&states).Error; err != nil {
		return out, err
	}
	for _, r := range states {
		if st, err := domain.ParseState(r.State); err == nil {
			out.ByState[st] += r.N
		}
	}
	if len(q.AwaitingLookupOf) > 0 {
		var n int64
		// desk_state, not state: operations_awaiting_lookup's predicate
		// (migration 00029).
		aw := all.and("desk_state = 'unknown_outcome' AND desk_entered_at IS NULL AND type IN ?", q.AwaitingLookupOf)
		if err := db.Raw("SELECT COUNT(*) FROM operations WHERE "+aw.where, aw.args...).Scan(&n).Error; err != nil {
			return out, err
		}
		out.AwaitingLookup = int(n)
		out.ByState[domain.UnknownOutcome] -= int(n)
	}
	if err := s.deskLoads(ctx, &out, desk, q.Bands); err != nil {
		return out, err
	}
	if err := s.flows(ctx, &out, all, q); err != nil {
		return out, err
	}
	start := dayStart(now, q.Days)
	if out.SettledByLookup, err = s.settledByLookupOf(ctx, q.Type, start); err != nil {
		return out, err
	}
	var latest []struct {
		ID, Key, Type, State string
		DeskEnteredAt        time.Time
	}
	lq := all.and("desk_entered_at >= ?", now.Add(-time.Duration(q.Hours)*time.Hour))
	if err := db.Raw("SELECT id, key, type, state, desk_entered_at FROM operations WHERE "+lq.where+
		" ORDER BY desk_entered_at DESC, id LIMIT ?", append(lq.args, q.Latest)...).Scan(&latest).Error; err != nil {
		return out, err
	}
	for _, r := range latest {
		st, _ := domain.ParseState(r.State)
		out.Latest = append(out.Latest, domain.DeskEntry{OperationID: r.ID, Key: r.Key, Type: r.Type, State: st, At: r.DeskEnteredAt.UTC()})
	}
	lst := domain.ListQuery{States: domain.DeskStates, AwaitingLookupOf: q.AwaitingLookupOf, Limit: 1}
	if q.Type != "" {
		lst.Types = []string{q.Type}
	}
	oldest, _, err := s.List(ctx, lst)
	if err != nil {
		return out, err
	}
	if len(oldest) == 1 {
		out.Oldest = &oldest[0]
	}
	return out, nil
}

// deskLoads reads the desk items by assignee, and with each assignee's
// count how many started waiting at or after each band's bound (now less
// its upper end), in one pass over the desk states: the bands are the
// differences of their sums — the queue's "within" and "older than"
// (store.List's InDeskSince and InDeskBefore) on the same column.
func (s *Store) deskLoads(ctx context.Context, out *domain.Overview, desk scope, bands []time.Duration) error {
	cols, args := []string{"assignee", "COUNT(*)"}, []any{}
	for _, b := range bands {
		if b > 0 {
			cols = append(cols, "COALESCE(SUM(CASE WHEN COALESCE(desk_entered_at, created_at) >= ? THEN 1 ELSE 0 END), 0)")
			args = append(args, out.Now.Add(-b))
		}
	}
	rows, err := s.db.WithContext(ctx).Raw("SELECT "+strings.Join(cols, ", ")+" FROM operations WHERE "+desk.where+
		" GROUP BY assignee ORDER BY COUNT(*) DESC, assignee", append(args, desk.args...)...).Rows()
	if err != nil {
		return err
	}
	defer rows.Close()
	cum := make([]int64, len(cols)-1)
	for rows.Next() {
		var who string
		n := make([]int64, len(cum))
		dest := []any{&who}
		for i := range n {
			dest = append(dest, &n[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		for i := range n {
			cum[i] += n[i]
		}
		out.ByAssignee = append(out.ByAssignee, domain.AssigneeLoad{Assignee: who, Items: int(n[0])})
	}
	if err := rows.Err(); err != nil {
		return err
	}
	out.AgeBands = differences(cum[1:], cum[0], len(bands))
	return nil
}

// dayStart is the midnight (UTC) that begins the first of the last days.
func dayStart(now time.Time, days int) time.Time {
	return now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(days - 1))
}

// settledByLookupOf counts the lookups' conclusions that needed no person
// since a time, of one type's operations or of all.
func (s *Store) settledByLookupOf(ctx context.Context, typ string, since time.Time) (int, error) {
	// The lifecycle's condition, verbatim, lets the count read the partial
	// index of decisions (migration 00016) rather than every event since.
	sql, args := "SELECT COUNT(*) FROM audit_events WHERE action IN ? AND at > ? AND "+notLifecycle,
		[]any{[]string{domain.ActionLookedUp, domain.ActionLookupNotFound}, since}
	if typ != "" {
		sql += " AND EXISTS (SELECT 1 FROM operations o WHERE o.id = audit_events.operation_id AND o.type = ?)"
		args = append(args, typ)
	}
	var n int64
	err := s.db.WithContext(ctx).Raw(sql, args...).Scan(&n).Error
	return int(n), err
}
