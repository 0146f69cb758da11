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
	return s.dialect.timeBucket(col, secs)
}

// flows fills the overview's hourly and daily entries and decisions, and
// the time to resolve of the decisions since the first day: one pass over
// the window's entries (migration 00021's index), counted in SQL by day
// and by hour, and one over its decisions, read to take their stays'
// percentiles and bucketed here as the lists' filters bound them (>=).
func (s *Store) flows(ctx context.Context, out *domain.Overview, all scope, q domain.OverviewQuery) error {
	hours := out.Now.Add(-time.Duration(q.Hours) * time.Hour)
	days := dayStart(out.Now, q.Days)
	since := days
	if hours.Before(days) {
		since = hours
	}
	out.PerHour = make([]domain.Flow, q.Hours)
	for i := range out.PerHour {
		out.PerHour[i].Start = hours.Add(time.Duration(i) * time.Hour)
	}
	out.PerDay = make([]domain.Flow, q.Days)
	for i := range out.PerDay {
		out.PerDay[i].Start = days.AddDate(0, 0, i)
	}
	// A time a clock put ahead of now counts in the newest bucket.
	into := func(flows []domain.Flow, i int) *domain.Flow { return &flows[min(i, len(flows)-1)] }

	entered := all.and("desk_entered_at >= ?", since)
	var rows []struct {
		D, H int64
		N    int
	}
	sql := "SELECT CASE WHEN desk_entered_at >= ? THEN " + s.bucketOf("desk_entered_at", 24*time.Hour) + " ELSE -1 END AS d, " +
		"CASE WHEN desk_entered_at >= ? THEN " + s.bucketOf("desk_entered_at", time.Hour) + " ELSE -1 END AS h, " +
		"COUNT(*) AS n FROM operations WHERE " + entered.where + " GROUP BY 1, 2"
	if err := s.db.WithContext(ctx).Raw(sql, append([]any{days, days, hours, hours}, entered.args...)...).Scan(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		if r.D >= 0 {
			into(out.PerDay, int(r.D)).Entered += r.N
			out.EnteredDays += r.N
		}
		if r.H >= 0 {
			into(out.PerHour, int(r.H)).Entered += r.N
			out.EnteredHours += r.N
		}
	}
	return s.decisions(ctx, out, all.and("resolution_by IS NOT NULL AND resolution_at >= ?", since), hours, days)
}

// decisions counts the decisions by hour since hours and by day since
// days, and takes the time to resolve of the desk stays those since days
// ended — desk entry to resolution. A resolution before its desk entry
// belongs to an earlier stay (the item came back since): it counts as a
// decision, its stay is left out.
func (s *Store) decisions(ctx context.Context, out *domain.Overview, cond scope, hours, days time.Time) error {
	var rows []struct {
		DeskEnteredAt *time.Time
		ResolutionAt  time.Time
	}
	if err := s.db.WithContext(ctx).Raw("SELECT desk_entered_at, resolution_at FROM operations WHERE "+cond.where,
		cond.args...).Scan(&rows).Error; err != nil {
		return err
	}
	var every []time.Duration
	perDay := make([][]time.Duration, len(out.PerDay))
	for _, r := range rows {
		at := r.ResolutionAt
		if !at.Before(hours) {
			out.PerHour[min(int(at.Sub(hours)/time.Hour), len(out.PerHour)-1)].Resolved++
			out.ResolvedHours++
		}
		if at.Before(days) {
			continue
		}
		i := min(int(at.Sub(days)/(24*time.Hour)), len(perDay)-1)
		out.PerDay[i].Resolved++
		out.ResolvedDays++
		if in := r.DeskEnteredAt; in != nil && !at.Before(*in) {
			perDay[i] = append(perDay[i], at.Sub(*in))
			every = append(every, at.Sub(*in))
		}
	}
	for i, ds := range perDay {
		slices.Sort(ds)
		out.PerDay[i].P50, out.PerDay[i].P90 = domain.Percentile(ds, 0.5), domain.Percentile(ds, 0.9)
	}
	slices.Sort(every)
	out.P50, out.P90 = domain.Percentile(every, 0.5), domain.Percentile(every, 0.9)
	return nil
}
