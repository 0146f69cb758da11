package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/pages"
)

// overview shows the desk at a glance, of every type or of one.
func (s *server) overview(c *gin.Context) {
	typ := c.Query("type")
	o, err := s.ledger.Desk.Overview(c.Request.Context(), me(c), typ)
	if err != nil {
		s.fail(c, err)
		return
	}
	v := overviewView(o, typ)
	v.Types = []pages.Option{{Value: "", Label: "every type"}}
	for _, card := range s.ledger.Cards.Sorted() {
		v.Types = append(v.Types, pages.Option{Value: card.Name, Label: card.Name})
	}
	v.Frame = s.frameFor(c, "Overview", "overview")
	page(c, http.StatusOK, pages.Overview(v), pages.OverviewBody(v))
}

// link is a list page's address for a filter, without an empty query.
func link(path string, f pages.QueueFilter) string {
	return strings.TrimSuffix(listURL(path, f, ""), "?")
}

// overviewView lays the overview out; every figure links to the list
// filtered to exactly what it counts (domain.Overview).
func overviewView(o domain.Overview, typ string) pages.OverviewView {
	v := pages.OverviewView{Now: o.Now, Type: typ, AwaitingLookup: o.AwaitingLookup,
		Self: link("/desk", pages.QueueFilter{Type: typ})}
	of := func(f pages.QueueFilter) pages.QueueFilter { f.Type = typ; return f }
	day := ageParam(24 * time.Hour)
	v.Figures = []pages.Figure{
		{Label: "in the desk now", N: o.InDesk(), Link: link("/desk/queue", of(pages.QueueFilter{})), TestID: "count-desk"},
		{Label: "handed to a person in the last 24 h", N: o.EnteredHours,
			Link: link(domain.DeskOperations, of(pages.QueueFilter{Entered: day})), TestID: "count-entered"},
		{Label: "decided by a person in the last 24 h", N: o.ResolvedHours,
			Link: link(domain.DeskOperations, of(pages.QueueFilter{Resolved: day})), TestID: "count-resolved"},
		{Label: "awaiting approval", N: o.ByState[domain.AwaitingApproval],
			Link: link(domain.DeskOperations, of(pages.QueueFilter{State: domain.AwaitingApproval.String()})), TestID: "count-approval"},
	}
	for _, st := range domain.States {
		sc := pages.StateCount{State: st.String(), N: o.ByState[st], InDesk: st.InDesk(),
			Link: link(domain.DeskOperations, of(pages.QueueFilter{State: st.String()}))}
		if st.InDesk() {
			sc.Link = link("/desk/queue", of(pages.QueueFilter{State: st.String()}))
		}
		v.States = append(v.States, sc)
	}
	// A band is the queue of items at least as old as its lower bound and
	// younger than its upper one.
	var lower string
	ages := components.Chart{ID: "chart-ages", Title: "Desk items by how long they have waited", Bucket: "Waiting",
		Start: "newest", End: "oldest", Series: []components.Series{{Name: "Items"}}}
	for i, b := range domain.DeskAgeBands {
		f := of(pages.QueueFilter{Age: lower})
		if b.Under > 0 {
			f.Within = ageParam(b.Under)
		}
		n := 0
		if i < len(o.AgeBands) {
			n = o.AgeBands[i]
		}
		v.Bands = append(v.Bands, pages.BandCount{Label: b.Label, N: n, Link: link("/desk/queue", f)})
		ages.Labels = append(ages.Labels, b.Label)
		ages.Series[0].Values = append(ages.Series[0].Values, float64(n))
		lower = f.Within
	}
	ages.Desc = "Of " + strconv.Itoa(o.InDesk()) + " desk items: " + bandsText(v.Bands) + "."
	v.Ages = ages
	v.Hourly, v.Daily = flowCharts(o)
	for _, e := range o.Latest {
		v.Latest = append(v.Latest, pages.EntryRow{ID: e.OperationID, Key: e.Key, Type: e.Type, State: e.State.String(), At: e.At})
	}
	v.LatestAll = v.Figures[1].Link
	if o.Oldest != nil {
		r := queueRow(*o.Oldest, domain.Card{}, o.Now, nil)
		v.Oldest = &r
	}
	v.Recovery = recoveryView(o, of)
	return v
}

func bandsText(bands []pages.BandCount) string {
	parts := make([]string, len(bands))
	for i, b := range bands {
		parts[i] = strconv.Itoa(b.N) + " " + b.Label
	}
	return strings.Join(parts, ", ")
}

// flowCharts are the entries and decisions hour by hour over the last day
// and day by day over the month.
func flowCharts(o domain.Overview) (hourly, daily components.Chart) {
	series := func(flows []domain.Flow) []components.Series {
		in, out := components.Series{Name: "Handed to a person"}, components.Series{Name: "Decided by a person"}
		for _, f := range flows {
			in.Values, out.Values = append(in.Values, float64(f.Entered)), append(out.Values, float64(f.Resolved))
		}
		return []components.Series{in, out}
	}
	hourly = components.Chart{ID: "overview-chart", Bucket: "Hour", Start: "24 h ago", End: "now", Series: series(o.PerHour),
		Title: "Handed to a person and decided, per hour over the last 24 hours",
		Desc: strconv.Itoa(o.EnteredHours) + " handed to a person and " + strconv.Itoa(o.ResolvedHours) +
			" decided by a person in the last 24 hours; the table below has each hour."}
	for i := range o.PerHour {
		ago := len(o.PerHour) - i
		hourly.Labels = append(hourly.Labels, strconv.Itoa(ago)+"–"+strconv.Itoa(ago-1)+" h ago")
	}
	daily = components.Chart{ID: "chart-daily", Bucket: "Day (UTC)", Series: series(o.PerDay),
		Title: "Handed to a person and decided, per day over the last " + strconv.Itoa(len(o.PerDay)) + " days",
		Desc: strconv.Itoa(o.EnteredDays) + " handed to a person and " + strconv.Itoa(o.ResolvedDays) +
			" decided by a person since " + dayLabel(o.PerDay, 0) + "; the table below has each day."}
	for i := range o.PerDay {
		daily.Labels = append(daily.Labels, dayLabel(o.PerDay, i))
	}
	if n := len(daily.Labels); n > 0 {
		daily.Start, daily.End = daily.Labels[0], daily.Labels[n-1]
	}
	return hourly, daily
}

func dayLabel(days []domain.Flow, i int) string {
	if i >= len(days) {
		return ""
	}
	return days[i].Start.Format("Mon 2 Jan")
}

// recoveryView is the month's time to resolve, what the lookups settled
// and who holds the desk's items.
func recoveryView(o domain.Overview, of func(pages.QueueFilter) pages.QueueFilter) pages.RecoveryView {
	v := pages.RecoveryView{Days: len(o.PerDay), Resolved: o.ResolvedDays, SettledByLookup: o.SettledByLookup,
		P50: humanDuration(o.P50), P90: humanDuration(o.P90)}
	if o.SettledByLookup > 0 && o.ResolvedDays > 0 {
		v.WaitSaved = humanDuration(time.Duration(o.SettledByLookup) * o.P50)
	}
	p50, p90 := components.Series{Name: "p50"}, components.Series{Name: "p90"}
	for _, d := range o.PerDay {
		p50.Values, p90.Values = append(p50.Values, d.P50.Seconds()), append(p90.Values, d.P90.Seconds())
		p50.Has, p90.Has = append(p50.Has, d.Resolved > 0), append(p90.Has, d.Resolved > 0)
	}
	v.Trend = components.Chart{ID: "chart-ttr", Bucket: "Day (UTC)", Series: []components.Series{p50, p90},
		Title:  "Time to resolve per day, p50 and p90, over the last " + strconv.Itoa(len(o.PerDay)) + " days",
		Desc:   "Over the month p50 " + humanDuration(o.P50) + " and p90 " + humanDuration(o.P90) + "; days without a decision have no point.",
		Format: func(s float64) string { return humanDuration(time.Duration(s * float64(time.Second))) }}
	for i := range o.PerDay {
		v.Trend.Labels = append(v.Trend.Labels, dayLabel(o.PerDay, i))
	}
	if n := len(v.Trend.Labels); n > 0 {
		v.Trend.Start, v.Trend.End = v.Trend.Labels[0], v.Trend.Labels[n-1]
	}
	for _, a := range o.ByAssignee {
		r := pages.AssigneeRow{Assignee: a.Assignee, Items: a.Items}
		if a.Assignee != "" {
			r.Link = link("/desk/queue", of(pages.QueueFilter{Assignee: a.Assignee}))
		}
		v.ByAssignee = append(v.ByAssignee, r)
	}
	return v
}

// humanDuration rounds a duration for reading: seconds under a minute,
// minutes under a day.
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < 24*time.Hour:
		return d.Round(time.Minute).String()
	}
	return d.Round(time.Hour).String()
}
