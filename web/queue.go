package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/pages"
)

// queuePageSize is one screen of desk items.
const queuePageSize = 50

// queue lists the desk's items, filtered by the URL's query so a filtered
// queue can be shared as a link.
func (s *server) queue(c *gin.Context) { s.listPage(c, false) }

// operations is the Operations page: the queue's search and filters over
// every state.
func (s *server) operations(c *gin.Context) { s.listPage(c, true) }

// listPage is the queue (all false) or the Operations page (all true):
// the filter read from the URL, one page of matching items, and the
// forms, links and counts around them.
func (s *server) listPage(c *gin.Context, all bool) {
	f := queueFilter(c)
	cursor, until := c.Query("cursor"), c.Query("until")
	v := s.listView(c, f, all)
	pushShortURL(c, &v, f, cursor, until)
	if fl, ok := s.takeFlash(c, func(f flash) bool { return f.Take }); ok {
		v.Stale = &pages.Stale{ID: fl.Op, Key: fl.Key, Changes: fl.Problem.Changes}
	}
	q, err := listQuery(f, me(c), cursor, until, all)
	if err == nil {
		err = s.listRows(c, &v, q, f, cursor, until)
	}
	if htmx(c) {
		v.NavCounts = s.deskCounts(c) // the refresh brings the navigation's counts along
	}
	if !all && f.Q != "" {
		v.Wider = listURL(domain.DeskOperations, pages.QueueFilter{Q: f.Q}, "")
		v.Found = s.operationByID(c, f.Q, v.Rows)
	}
	vp := viewPages[v.Path()]
	v.Views = s.savedViews(c, vp, viewFilter(vp, c.Query), v.Self)
	if err != nil {
		// A filter that cannot be read is shown beside the form, which stays
		// usable: htmx swaps only successful answers.
		v.Problem = s.message(c, err)
	}
	page(c, http.StatusOK, pages.Queue(v), pages.QueueResults(v))
}

// listView is a list page before its rows: the frame, the filter and the
// filter form's choices (every state on the Operations page), the sorts.
func (s *server) listView(c *gin.Context, f pages.QueueFilter, all bool) pages.QueueView {
	title, nav := "Queue", "queue"
	if all {
		title, nav = "Operations", "operations"
	}
	v := pages.QueueView{Frame: s.frameFor(c, title, nav), Filter: f, Self: c.Request.URL.RequestURI(),
		CanAct: me(c).Role.AtLeast(domain.RoleOperator) && !all, All: all}
	v.States, v.Types, v.Provs, v.Ages = s.queueOptions()
	v.Sorts = listSorts(all)
	if all {
		v.States = []pages.Option{{Value: "", Label: "every state"}}
		for _, st := range domain.States {
			v.States = append(v.States, pages.Option{Value: st.String(), Label: components.StateLabel(st.String())})
		}
	}
	return v
}

// pushShortURL keeps only the fields in use in the list's own address. A
// filter form sends every field, the empty ones too; the address the
// browser shows (htmx pushes it) and the one decisions return to keep only
// those in use, so it reads, and shares, as what it filters.
func pushShortURL(c *gin.Context, v *pages.QueueView, f pages.QueueFilter, cursor, until string) {
	if !emptyParams(c.Request.URL.RawQuery) {
		return
	}
	v.Self = strings.TrimSuffix(listURL(v.Path(), f, cursor), "?")
	if until != "" {
		v.Self = listURLAt(v.Path(), f, "until", until)
	}
	c.Header("HX-Push-Url", v.Self)
}

// listQuery is the ledger's query for the filter: the queue's states, or
// on the Operations page any state the filter names.
func listQuery(f pages.QueueFilter, person domain.Actor, cursor, until string, all bool) (domain.ListQuery, error) {
	qf := f
	if all {
		qf.State = "" // everyState reads it: any state goes
	}
	q, err := queueQuery(qf, person, cursor, time.Now())
	if all && err == nil {
		q, err = everyState(q, f)
	}
	q.Until = until
	return q, err
}

// listRows reads one page of the query into v: the rows with their
// summaries and twins, the page links, the matching count, and the people
// to assign to when the page offers bulk actions.
func (s *server) listRows(c *gin.Context, v *pages.QueueView, q domain.ListQuery, f pages.QueueFilter, cursor, until string) error {
	person := me(c)
	counted := s.countAside(c.Request.Context(), person, q, f, v.TotalBound())
	ops, next, err := s.ledger.Desk.DeskQueue(c.Request.Context(), person, q, f.Provider)
	now := time.Now()
	v.Updated = now
	for _, op := range ops {
		card, _ := s.ledger.Cards.Get(op.Type)
		row := queueRow(op, card, now, &person)
		row.Summary = summaryFields(card.SummaryOf(op, person))
		v.Rows = append(v.Rows, row)
	}
	v.First, v.Prev, v.Next = pageLinks(v.Path(), f, cursor, until, next, len(v.Rows))
	s.markTwins(c, person, v.Rows)
	if err == nil {
		v.Total = s.matchingCount(c, counted, len(v.Rows), cursor != "" || until != "" || next != "")
		if v.CanAct && v.Total <= v.TotalBound() {
			v.Matching = max(v.Total, 0) // "select all N matching"
		}
	}
	if v.CanAct && len(v.Rows) > 0 {
		v.People = s.assignable(c)
	}
	return err
}

// counted is a matching count read aside.
type counted struct {
	n   int
	err error
}

// countAside starts the count of every item the filter matches, at most
// most+1, beside the page's list, and returns where it will arrive. Whether
// a first page needs it is known only once its list is read (a next page
// exists), and for a search matching thousands of items the count costs
// what the list does: read one after the other they took twice as long.
// When the page turns out to be the only one, its count read no more than
// the page's rows.
func (s *server) countAside(ctx context.Context, person domain.Actor, q domain.ListQuery, f pages.QueueFilter, most int) <-chan counted {
	out := make(chan counted, 1)
	go func() {
		n, err := s.ledger.Desk.DeskQueueCount(ctx, person, q, f.Provider, most)
		out <- counted{n, err}
	}()
	return out
}

// matchingCount is how many items the filter matches over every page (the
// list's total, and the N of "select all N matching"): the page's rows
// when it is the only page, else the count read aside. A count that cannot
// be read is -1: the page shows no total and offers no "select all" rather
// than failing, since the list itself was read.
func (s *server) matchingCount(c *gin.Context, aside <-chan counted, rows int, paged bool) int {
	r := <-aside
	if !paged {
		return rows
	}
	if r.err != nil {
		s.log.WarnContext(c.Request.Context(), "the queue's matching count", "err", r.err)
		return -1
	}
	return r.n
}

// emptyParams reports whether a query carries a field with no value.
func emptyParams(raw string) bool {
	vals, _ := url.ParseQuery(raw)
	for _, vs := range vals {
		for _, v := range vs {
			if strings.TrimSpace(v) == "" {
				return true
			}
		}
	}
	return false
}

// queueFilter reads the queue's filter from the URL.
func queueFilter(c *gin.Context) pages.QueueFilter { return filterFrom(c.Query, "assignee") }

// filterFrom reads a queue filter from a query or a form; assignee names
// the assignee's field (a bulk form has an assignee of its own).
func filterFrom(get func(string) string, assignee string) pages.QueueFilter {
	return pages.QueueFilter{Q: strings.TrimSpace(get("q")), State: get("state"), Type: get("type"),
		Provider: get("provider"), Namespace: get("namespace"), Assignee: get(assignee),
		Age: get("age"), Mine: get("mine") != "", Error: get("error"),
		Within: get("within"), Entered: get("entered"), Resolved: get("resolved"), Sort: get("sort")}
}

// queueQuery turns the filter into the Ledger's list query.
func queueQuery(f pages.QueueFilter, person domain.Actor, cursor string, now time.Time) (domain.ListQuery, error) {
	q := domain.ListQuery{States: domain.DeskStates, Namespace: f.Namespace, Assignee: f.Assignee, Text: f.Q,
		Limit: queuePageSize, Cursor: cursor}
	if f.State != "" {
		st, err := domain.ParseState(f.State)
		if err != nil || !st.InDesk() {
			return q, domain.Invalid(domain.FieldError{Field: "state", Message: "must be unknown_outcome or failed_terminal"})
		}
		q.States = []domain.State{st}
	}
	if f.Type != "" {
		q.Types = []string{f.Type}
	}
	if f.Error != "" {
		k := domain.ParseErrorKind(f.Error)
		q.Error = &k
	}
	if f.Mine {
		q.HeldBy = &person
	}
	if f.Age != "" {
		d, err := parseAge(f.Age)
		if err != nil {
			return q, domain.Invalid(domain.FieldError{Field: "age", Message: "must be a duration such as 30m, 4h or 2d"})
		}
		q.InDeskBefore = now.Add(-d)
	}
	if err := sortQuery(&q, f.Sort, false); err != nil {
		return q, err
	}
	return q, windows(&q, f, now)
}

// everyState widens the queue's query to every state for the Operations
// page, and searches deeper.
func everyState(q domain.ListQuery, f pages.QueueFilter) (domain.ListQuery, error) {
	q.States, q.Deep = nil, true
	if err := sortQuery(&q, f.Sort, true); err != nil {
		return q, err
	}
	if f.State != "" {
		st, err := domain.ParseState(f.State)
		if err != nil {
			return q, domain.Invalid(domain.FieldError{Field: "state", Message: "is not a state"})
		}
		q.States = []domain.State{st}
	}
	return q, nil
}

// queueURL is the queue's URL for a filter, with a page cursor.
func queueURL(f pages.QueueFilter, cursor string) string { return listURL("/desk/queue", f, cursor) }

// listURL is a list page's URL for a filter, with a page cursor.
func listURL(path string, f pages.QueueFilter, cursor string) string {
	return listURLAt(path, f, "cursor", cursor)
}

// listURLAt is a list page's URL for a filter, with a page's cursor under
// its name: cursor (the page after) or until (the page up to).
func listURLAt(path string, f pages.QueueFilter, name, cursor string) string {
	vals := url.Values{}
	for k, v := range map[string]string{"q": f.Q, "state": f.State, "type": f.Type, "provider": f.Provider,
		"namespace": f.Namespace, "assignee": f.Assignee, "age": f.Age, "error": f.Error, name: cursor,
		"within": f.Within, "entered": f.Entered, "resolved": f.Resolved, "sort": f.Sort} {
		if v != "" {
			vals.Set(k, v)
		}
	}
	if f.Mine {
		vals.Set("mine", "1")
	}
	return path + "?" + vals.Encode()
}

// queueOptions are the filter's choices: desk states, configured types and
// providers, and age thresholds.
func (s *server) queueOptions() (states, types, providers, ages []pages.Option) {
	states = []pages.Option{{Value: "", Label: "both desk states"}}
	for _, st := range domain.DeskStates {
		states = append(states, pages.Option{Value: st.String(), Label: components.StateLabel(st.String())})
	}
	types = []pages.Option{{Value: "", Label: "every type"}}
	providers = []pages.Option{{Value: "", Label: "every provider"}}
	var names []string
	for _, card := range s.ledger.Cards.Sorted() {
		types = append(types, pages.Option{Value: card.Name, Label: card.Name})
		if !slices.Contains(names, card.Provider) {
			names = append(names, card.Provider)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		providers = append(providers, pages.Option{Value: n, Label: n})
	}
	ages = []pages.Option{{Value: "", Label: "any age"}}
	for _, b := range domain.DeskAgeBands {
		if b.Under > 0 {
			ages = append(ages, pages.Option{Value: ageParam(b.Under), Label: ageParam(b.Under)})
		}
	}
	return states, types, providers, ages
}

// holdBadges are the queue's words for the holds that keep an item from a
// second execution: a twin, a supersede of something already sent, and a
// revision that waits for the earlier send's outcome (which is no twin).
var holdBadges = map[string]string{
	domain.CodeTwinUnresolved: "twin",
	domain.CodeSupersedesSent: "supersedes",
	domain.CodeRevisionWaits:  "waits",
}

// queueRow is one desk item as the queue shows it.
func queueRow(op domain.Operation, card domain.Card, now time.Time, me *domain.Actor) pages.QueueRow {
	r := pages.QueueRow{ID: op.ID, Key: op.Key, Type: op.Type, Provider: card.Provider, Namespace: op.Namespace,
		EventID: op.EventID, State: op.State.String(), Assignee: op.Assignee, Attempts: op.Attempts,
		Version: op.Version, CreatedAt: op.CreatedAt, Since: op.CreatedAt,
		NextDecision: nextDecision(op), Mine: me != nil && op.AssignedTo(*me)}
	if e := op.LastError; e != nil {
		if hold, ok := holdBadges[e.Code]; ok {
			r.Twin, r.Hold = e.Message, hold
		}
	}
	if op.DeskEnteredAt != nil { // an item's age is how long it has waited for a person
		r.Since = *op.DeskEnteredAt
	}
	r.Age = components.Age(now.Sub(r.Since))
	if e := op.LastError; e != nil {
		r.LastError = errorText(*e)
	}
	return r
}

func errorText(e domain.ErrorInfo) string {
	parts := []string{e.Class.String()}
	if e.Code != "" {
		parts = append(parts, e.Code)
	}
	if e.Message != "" {
		parts = append(parts, e.Message)
	}
	return strings.Join(parts, " · ")
}

// markTwins flags the rows that a registration under another key is held
// for (twin_unresolved): deciding one decides whether the other may run.
// One query for the page: the held twins, whose hold names the original.
func (s *server) markTwins(c *gin.Context, person domain.Actor, rows []pages.QueueRow) {
	if len(rows) == 0 {
		return
	}
	q := domain.ListQuery{States: []domain.State{domain.AwaitingApproval}, Limit: 200,
		Error: &domain.ErrorKind{Class: domain.ClassConflict.String(), Code: domain.CodeTwinUnresolved}}
	held, _, err := s.ledger.Desk.DeskQueue(c.Request.Context(), person, q, "")
	if err != nil {
		return // a marker, not the page: the queue stays usable without it
	}
	for i := range rows {
		for _, h := range held {
			if rows[i].Twin == "" && strings.Contains(h.LastError.Message, "("+rows[i].ID+")") {
				rows[i].Twin = "The same content under " + h.Key + " waits for approval until this one is decided."
				rows[i].Hold = "twin"
			}
		}
	}
}

// nextDecision says in words what the operation needs from a person.
func nextDecision(op domain.Operation) string {
	switch op.State {
	case domain.UnknownOutcome:
		return "Look the provider key up at the provider, then confirm whether it was executed."
	case domain.FailedTerminal:
		if op.LastError != nil && op.LastError.Code == "loop_detected" {
			return "Check why it triggered itself, then retry or cancel."
		}
		return "Fix the cause, then retry or cancel."
	case domain.AwaitingApproval:
		if e := op.LastError; e != nil && (e.Code == domain.CodeTwinUnresolved || e.Code == domain.CodeSupersedesSent) {
			return "Find out whether the other operation executed; approve only to run this one deliberately a second time, or reject it."
		}
		return "Someone other than the author approves or rejects content version " + strconv.Itoa(op.ContentVersion) + "."
	case domain.Completed, domain.Cancelled:
		return "Nothing: it is " + components.StateLabel(op.State.String()) + "."
	}
	return "Nothing yet: the workflow is on it."
}

// parseAge reads a Go duration, or whole days ("2d").
func parseAge(v string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 36500 {
			return 0, strconv.ErrRange
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > 100*365*24*time.Hour {
		return 0, strconv.ErrRange
	}
	return d, nil
}

// ageParam writes a duration the way parseAge reads it: "8h", "7d".
func ageParam(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return strconv.Itoa(int(d/(24*time.Hour))) + "d"
	}
	return strconv.Itoa(int(d/time.Hour)) + "h"
}

// operationByID is the operation a queue search names by its ID, when the
// queue does not list it: the queue searches what a person reads off a
// row, and an ID pasted from a log or a webhook should still lead there.
func (s *server) operationByID(c *gin.Context, q string, rows []pages.QueueRow) *pages.QueueRow {
	if !strings.HasPrefix(q, "op_") || slices.ContainsFunc(rows, func(r pages.QueueRow) bool { return r.ID == q }) {
		return nil
	}
	op, err := s.ledger.Desk.Get(c.Request.Context(), me(c), q)
	if err != nil {
		return nil
	}
	return &pages.QueueRow{ID: op.ID, Key: op.Key, State: op.State.String()}
}
