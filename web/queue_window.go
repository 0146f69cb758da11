package web

import (
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// windows reads the overview's bounds into the list query: within (in the
// desk for less than), entered and resolved (handed to a person, decided
// by one, within), each a duration as age is.
func windows(q *domain.ListQuery, f pages.QueueFilter, now time.Time) error {
	for _, w := range []struct {
		field, value string
		into         *time.Time
	}{
		{"within", f.Within, &q.InDeskSince},
		{"entered", f.Entered, &q.EnteredSince},
		{"resolved", f.Resolved, &q.ResolvedSince},
	} {
		if w.value == "" {
			continue
		}
		d, err := parseAge(w.value)
		if err != nil {
			return domain.Invalid(domain.FieldError{Field: w.field, Message: "must be a duration such as 30m, 4h or 2d"})
		}
		*w.into = now.Add(-d)
	}
	return nil
}
