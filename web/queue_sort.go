package web

import (
	"strings"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// listSorts are the orders of the list pages, by their sort parameter.
// The Operations page offers no "last change": over every state there is
// no index on updated_at to read a page along, and ordering by it would
// sort the whole table for each page; the queue's items are few.
func listSorts(all bool) []pages.Option {
	sorts := []pages.Option{{Value: "", Label: "oldest"}, {Value: "newest", Label: "newest"}}
	if !all {
		sorts = append(sorts, pages.Option{Value: "changed", Label: "changed"})
	}
	return sorts
}

// sortQuery sets the list query's order from the filter's sort; an order
// the page does not offer is refused, as another unreadable filter is.
func sortQuery(q *domain.ListQuery, sort string, all bool) error {
	q.NewestFirst, q.RecentFirst = false, false
	switch {
	case sort == "" || sort == "oldest":
	case sort == "newest":
		q.NewestFirst = true
	case sort == "changed" && !all:
		q.RecentFirst = true
	case all:
		return domain.Invalid(domain.FieldError{Field: "sort", Message: "must be oldest or newest"})
	default:
		return domain.Invalid(domain.FieldError{Field: "sort", Message: "must be oldest, newest or changed"})
	}
	return nil
}

// pageLinks are a list page's first, previous and next pages' URLs. A page
// read after a cursor has the page before it up to that cursor's row
// (until); a page read until a row has the next page after that row, and
// the one before when the store says there is one (earlier).
func pageLinks(path string, f pages.QueueFilter, cursor, until, next string, rows int) (first, prev, nextURL string) {
	switch {
	case until != "":
		if rows > 0 {
			nextURL = listURLAt(path, f, "cursor", until)
		}
		if next != "" {
			prev = listURLAt(path, f, "until", next)
		}
	default:
		if next != "" {
			nextURL = listURL(path, f, next)
		}
		if cursor != "" {
			prev = listURLAt(path, f, "until", cursor)
		}
	}
	if prev != "" {
		first = strings.TrimSuffix(listURL(path, f, ""), "?")
	}
	return first, prev, nextURL
}
