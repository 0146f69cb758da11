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
var listPaths = []string{"/desk/queue", domain.DeskOperations}

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

// nextInList is the item after cur in the list from ("" for the queue),
// with the list's filter, "" when none is left; in says whether cur itself
// is still in the list. Lists are ordered by (created_at, id), so the next
// item is the first one after cur's place, whether or not the decision
// took cur off the list; past the end it is the list's first.
func (s *server) nextInList(c *gin.Context, cur domain.Operation, from string) (next string, in bool) {
	u, _ := url.Parse(from)
	if from == "" {
		u = &url.URL{Path: "/desk/queue"}
	}
	vals := u.Query()
	f := filterFrom(vals.Get, "assignee")
	all := u.Path == domain.DeskOperations
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
	after := func(op domain.Operation) bool {
		return op.CreatedAt.After(cur.CreatedAt) || op.CreatedAt.Equal(cur.CreatedAt) && op.ID > cur.ID
	}
	fromStart, first := q.Cursor == "", ""
	for range nextPages {
		ops, cursor, err := s.ledger.Desk.DeskQueue(c.Request.Context(), person, q, f.Provider)
		if err != nil {
			return "", false
		}
		for _, op := range ops {
			switch {
			case op.ID == cur.ID:
				in = true
			case after(op):
				return op.ID, in
			case first == "":
				first = op.ID
			}
		}
		if cursor == "" { // the end of the list: wrap to its first item
			if !fromStart {
				q.Cursor, q.Limit, first = "", 2, ""
				if ops, _, err := s.ledger.Desk.DeskQueue(c.Request.Context(), person, q, f.Provider); err == nil {
					first = firstOther(ops, cur.ID)
				}
			}
			return first, in
		}
		q.Cursor = cursor
	}
	return "", in // further than the pages read: no guess
}

// firstOther is the first of ops that is not id.
func firstOther(ops []domain.Operation, id string) string {
	for _, op := range ops {
		if op.ID != id {
			return op.ID
		}
	}
	return ""
}

// nextPages bounds the pages read looking for the next item.
const nextPages = 5
