package web

import (
	"net/url"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// A person works through a filtered list: the queue or the Operations page
// with a filter. The list's URL travels with them as ?from= — on the item's
// link, through the decision form and its 303 — so after a decision "next
// item" is the next one of that same filter, and "back" returns to that
// filter, scrolled to the row (#row-ID).

// listPaths are the lists an item can be opened from.
var listPaths = []string{"/desk/queue", "/desk/operations"}

// fromList is a list URL as ?from= or a form's from names it; "" unless it
// is one of the desk's lists, so it can lead nowhere else.
func fromList(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !slices.Contains(listPaths, u.Path) {
		return ""
	}
	if u.RawQuery == "" {
		return u.Path
	}
	return u.Path + "?" + u.RawQuery
}

// fromOf is the list the request came from: the query's from, or the
// posted form's.
func fromOf(c *gin.Context) string {
	if f := fromList(c.Query("from")); f != "" {
		return f
	}
	return fromList(c.PostForm("from"))
}

// nextInList is the item after id in the list from ("" for the queue),
// with the list's filter and page, "" when none is left; in says whether
// id itself is still in the list.
func (s *server) nextInList(c *gin.Context, id, from string) (next string, in bool) {
	u, _ := url.Parse(from)
	if from == "" {
		u = &url.URL{Path: "/desk/queue"}
	}
	vals := u.Query()
	f := filterFrom(vals.Get, "assignee")
	all := u.Path == "/desk/operations"
	qf := f
	if all {
		qf.State = ""
	}
	person := me(c)
	q, err := queueQuery(qf, person, vals.Get("cursor"), time.Now())
	if all && err == nil {
		q, err = everyState(q, f)
	}
	if err != nil {
		return "", false
	}
	ops, cursor, err := s.ledger.DeskQueue(c.Request.Context(), person, q, f.Provider)
	if err != nil {
		return "", false
	}
	i := slices.IndexFunc(ops, func(op domain.Operation) bool { return op.ID == id })
	switch {
	case i < 0 && len(ops) > 0:
		return ops[0].ID, false // the item left the list: the next is now its first
	case i >= 0 && i+1 < len(ops):
		return ops[i+1].ID, true
	case i >= 0 && cursor != "":
		q.Cursor, q.Limit = cursor, 1
		if more, _, err := s.ledger.DeskQueue(c.Request.Context(), person, q, f.Provider); err == nil && len(more) > 0 {
			return more[0].ID, true
		}
	}
	return "", i >= 0
}
