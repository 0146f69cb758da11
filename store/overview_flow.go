package store

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// bucketOf is SQL for how many whole units col lies after an origin (its
// one argument), for rows where it is not before it. The two databases
// subtract times differently: PostgreSQL in epoch seconds, SQLite, which
// keeps times as text, in Julian days; a cast truncates the non-negative
// quotient to its floor.
func (s *Store) bucketOf(col string, unit time.Duration) string {
	secs := strconv.FormatInt(int64(unit/time.Second), 10)
	if s.dialect == "postgres" {
		return "CAST(FLOOR(EXTRACT(EPOCH FROM (" + col + " - CAST(? AS timestamptz))) / " + secs + ") AS bigint)"
	}
	return "CAST((julianday(" + col + ") - julianday(?)) * 86400 / " + secs + " AS INTEGER)"
}

// flows fills the overview's hourly and daily entries and decisions, and
// the time to resolve of the decisions since the first day.
func (s *Store) flows(ctx context.Context, out *domain.Overview, all scope, q domain.OverviewQuery) error {
	hours := out.Now.Add(-time.Duration(q.Hours) * time.Hour)
	days := dayStart(out.Now, q.Days)
	out.PerHour = make([]domain.Flow, q.Hours)
	for i := range out.PerHour {
		out.PerHour[i].Start = hours.Add(time.Duration(i) * time.Hour)
	}
	out.PerDay = make([]domain.Flow, q.Days)
	for i := range out.PerDay {
		out.PerDay[i].Start = days.AddDate(0, 0, i)
	}
	entered := func(since time.Time) scope { return all.and("desk_entered_at >= ?", since) }
	resolved := func(since time.Time) scope {
		return all.and("resolution_by IS NOT NULL AND resolution_at >= ?", since)
	}
	for _, c := range []struct {
		col    string
		cond   scope
		origin time.Time
		unit   time.Duration
		into   []domain.Flow
		field  func(*domain.Flow) *int
		total  *int
	}{
		{"desk_entered_at", entered(hours), hours, time.Hour, out.PerHour, func(f *domain.Flow) *int { return &f.Entered }, &out.EnteredHours},
		{"resolution_at", resolved(hours), hours, time.Hour, out.PerHour, func(f *domain.Flow) *int { return &f.Resolved }, &out.ResolvedHours},
		{"desk_entered_at", entered(days), days, 24 * time.Hour, out.PerDay, func(f *domain.Flow) *int { return &f.Entered }, &out.EnteredDays},
		{"resolution_at", resolved(days), days, 24 * time.Hour, out.PerDay, func(f *domain.Flow) *int { return &f.Resolved }, &out.ResolvedDays},
	} {
		var rows []struct {
			B int64
			N int
		}
		sql := "SELECT " + s.bucketOf(c.col, c.unit) + " AS b, COUNT(*) AS n FROM operations WHERE " + c.cond.where + " GROUP BY 1"
		if err := s.db.WithContext(ctx).Raw(sql, append([]any{c.origin}, c.cond.args...)...).Scan(&rows).Error; err != nil {
			return err
		}
		for _, r := range rows {
			// A time a clock put ahead of now counts in the newest bucket.
			i := min(max(int(r.B), 0), len(c.into)-1)
			*c.field(&c.into[i]) += r.N
			*c.total += r.N
		}
	}
	return s.stays(ctx, out, resolved(days), days)
}

// stays reads the desk stays that the decisions since start ended — desk
// entry to resolution — for the time to resolve per day and overall. A
// resolution before its desk entry belongs to an earlier stay (the item
// came back since) and is left out.
func (s *Store) stays(ctx context.Context, out *domain.Overview, cond scope, start time.Time) error {
	var rows []struct {
		DeskEnteredAt time.Time
		ResolutionAt  time.Time
	}
	if err := s.db.WithContext(ctx).Raw("SELECT desk_entered_at, resolution_at FROM operations WHERE "+cond.where+
		" AND desk_entered_at IS NOT NULL", cond.args...).Scan(&rows).Error; err != nil {
		return err
	}
	var every []time.Duration
	perDay := make([][]time.Duration, len(out.PerDay))
	for _, r := range rows {
		d := r.ResolutionAt.Sub(r.DeskEnteredAt)
		if d < 0 {
			continue
		}
		i := min(max(int(r.ResolutionAt.Sub(start)/(24*time.Hour)), 0), len(perDay)-1)
		perDay[i] = append(perDay[i], d)
		every = append(every, d)
	}
	for i, ds := range perDay {
		slices.Sort(ds)
		out.PerDay[i].P50, out.PerDay[i].P90 = domain.Percentile(ds, 0.5), domain.Percentile(ds, 0.9)
	}
	slices.Sort(every)
	out.P50, out.P90 = domain.Percentile(every, 0.5), domain.Percentile(every, 0.9)
	return nil
}
