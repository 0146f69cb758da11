package web

import (
	"net/url"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
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
	q, err := listQuery(f, me(c), vals.Get("cursor"), "", u.Path == domain.DeskOperations)
	if err != nil {
		return "", false
	}
	fromStart, first := q.Cursor == "", ""
	for range nextPages {
		ops, cursor, err := s.ledger.Desk.DeskQueue(c.Request.Context(), me(c), q, f.Provider)
		if err != nil {
			return "", false
		}
		var found string
		if found, first, in = afterIn(ops, cur, first, in); found != "" {
			return found, in
		}
		if cursor == "" { // the end of the list: wrap to its first item
			if !fromStart {
				first = s.firstInList(c, q, f, cur.ID)
			}
			return first, in
		}
		q.Cursor = cursor
	}
	return "", in // further than the pages read: no guess
}

// afterIn reads one page of the list for nextInList: the first item after
// cur's place (found), the page's first other item when none came before
// (first), and whether cur itself was on it (in).
func afterIn(ops []domain.Operation, cur domain.Operation, first string, in bool) (found, firstOut string, inOut bool) {
	for _, op := range ops {
		switch {
		case op.ID == cur.ID:
			in = true
		case op.CreatedAt.After(cur.CreatedAt) || op.CreatedAt.Equal(cur.CreatedAt) && op.ID > cur.ID:
			return op.ID, first, in
		case first == "":
			first = op.ID
		}
	}
	return "", first, in
}

// firstInList is the list's first item other than cur, read from its
// start: where nextInList wraps when it began past the start.
func (s *server) firstInList(c *gin.Context, q domain.ListQuery, f pages.QueueFilter, cur string) string {
	q.Cursor, q.Limit = "", 2
	ops, _, err := s.ledger.Desk.DeskQueue(c.Request.Context(), me(c), q, f.Provider)
	if err != nil {
		return ""
	}
	return firstOther(ops, cur)
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
