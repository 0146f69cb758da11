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
	opts := &sql.TxOptions{ReadOnly: true}
	if s.dialect == "postgres" {
		opts.Isolation = sql.LevelRepeatableRead
	}
	var out domain.Overview
	err := s.transaction(ctx, func(tx *gorm.DB) error {
		var err error
		out, err = (&Store{db: tx, dialect: s.dialect, now: s.now}).overview(ctx, q)
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
	desk := listed.and("state IN ?", deskStateNames())
	db := s.db.WithContext(ctx)

	// By state in one pass; then the items awaiting the lookup, from
	// their own partial index (migration 00015), taken out.
	var states []struct {
		State string
		N     int
	}
	if err := db.Raw("SELECT state, COUNT(*) AS n FROM operations WHERE "+all.where+" GROUP BY state", all.args...).Scan(&states).Error; err != nil {
		return out, err
	}
	for _, r := range states {
		if st, err := domain.ParseState(r.State); err == nil {
			out.ByState[st] += r.N
		}
	}
	if len(q.AwaitingLookupOf) > 0 {
		var n int64
		aw := all.and(awaiting, q.AwaitingLookupOf)
		if err := db.Raw("SELECT COUNT(*) FROM operations WHERE "+aw.where, aw.args...).Scan(&n).Error; err != nil {
			return out, err
		}
		out.AwaitingLookup = int(n)
		out.ByState[domain.UnknownOutcome] -= int(n)
	}
	if out.AgeBands, err = s.ageBands(ctx, desk, now, q.Bands); err != nil {
		return out, err
	}
	if err := s.flows(ctx, &out, all, q); err != nil {
		return out, err
	}
	start := dayStart(now, q.Days)
	if out.SettledByLookup, err = s.settledByLookupOf(ctx, q.Type, start); err != nil {
		return out, err
	}
	var loads []struct {
		Assignee string
		N        int
	}
	if err := db.Raw("SELECT assignee, COUNT(*) AS n FROM operations WHERE "+desk.where+
		" GROUP BY assignee ORDER BY COUNT(*) DESC, assignee", desk.args...).Scan(&loads).Error; err != nil {
		return out, err
	}
	for _, l := range loads {
		out.ByAssignee = append(out.ByAssignee, domain.AssigneeLoad{Assignee: l.Assignee, Items: l.N})
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

// ageBands counts the desk items per band: those that started waiting at
// or after each bound (now less the band's upper end), then differences —
// the queue's "within" and "older than" (store.List's InDeskSince and
// InDeskBefore) on the same column.
func (s *Store) ageBands(ctx context.Context, desk scope, now time.Time, bands []time.Duration) ([]int, error) {
	cols, args := []string{"COUNT(*)"}, []any{}
	for _, b := range bands {
		if b > 0 {
			cols = append(cols, "COALESCE(SUM(CASE WHEN COALESCE(desk_entered_at, created_at) >= ? THEN 1 ELSE 0 END), 0)")
			args = append(args, now.Add(-b))
		}
	}
	cum, err := s.scanCounts(ctx, len(cols), "SELECT "+strings.Join(cols, ", ")+" FROM operations WHERE "+desk.where,
		append(args, desk.args...)...)
	if err != nil {
		return nil, err
	}
	return differences(cum[1:], cum[0], len(bands)), nil
}

// dayStart is the midnight (UTC) that begins the first of the last days.
func dayStart(now time.Time, days int) time.Time {
	return now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(days - 1))
}

// settledByLookupOf is settledByLookup for one type's operations, or all.
func (s *Store) settledByLookupOf(ctx context.Context, typ string, since time.Time) (int, error) {
	if typ == "" {
		return s.settledByLookup(ctx, since)
	}
	var n int64
	err := s.db.WithContext(ctx).Raw("SELECT COUNT(*) FROM audit_events e JOIN operations o ON o.id = e.operation_id"+
		" WHERE e.action IN ? AND e.at > ? AND o.type = ?",
		[]string{domain.ActionLookedUp, domain.ActionLookupNotFound}, since, typ).Scan(&n).Error
	return int(n), err
}
