package api

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/opshandoff/handoff/domain"
)

// listQuery is GET /v1/operations' query, parsed into the domain's filter and
// the provider name (which the Ledger turns into types).
type listQuery struct {
	domain.ListQuery
	provider string
}

const (
	defaultListLimit = 50
	maxListLimit     = 200
)

// listParams are the accepted query parameters; "state" is the one that may
// repeat. Unknown parameters are refused like unknown JSON fields: a typo
// such as "stat=" must not silently return everything.
var listParams = map[string]bool{"key": false, "state": true, "type": false, "namespace": false,
	"event_id": false, "correlation_id": false, "provider": false, "assignee": false, "q": false,
	"older_than": false, "limit": false, "cursor": false}

// parseListQuery reads the list query; now anchors older_than.
func parseListQuery(raw string, now time.Time) (listQuery, error) {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return listQuery{}, domain.Invalid(domain.FieldError{Field: "query", Message: "is not a valid query string"})
	}
	var errs fieldErrs
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		vs := vals[name]
		repeatable, known := listParams[name]
		switch {
		case !known:
			errs.add(name, "is not a known query parameter")
		case !repeatable && len(vs) > 1:
			errs.add(name, "may be given once")
		}
		for _, v := range vs {
			if !utf8.ValidString(v) || len(v) > 1000 {
				errs.add(name, "must be valid text of at most 1000 bytes")
			}
		}
	}
	if len(errs) > 0 {
		return listQuery{}, errs.err() // the rest would only add noise
	}
	q := listQuery{ListQuery: domain.ListQuery{Namespace: vals.Get("namespace"), Key: vals.Get("key"),
		EventID: vals.Get("event_id"), CorrelationID: vals.Get("correlation_id"), Assignee: vals.Get("assignee"),
		Text: vals.Get("q"), Cursor: vals.Get("cursor"), Limit: defaultListLimit}, provider: vals.Get("provider")}
	if t := vals.Get("type"); t != "" {
		q.Types = []string{t}
	}
	for _, v := range vals["state"] {
		st, err := domain.ParseState(v)
		if err != nil {
			errs.add("state", "must be one of %s", strings.Join(enumValues["states"], ", "))
			continue
		}
		q.States = append(q.States, st)
	}
	if v := vals.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			errs.add("limit", "must be an integer between 1 and %d", maxListLimit)
		}
		q.Limit = n
	}
	if v := vals.Get("older_than"); v != "" {
		d, err := parseAge(v)
		if err != nil {
			errs.add("older_than", "must be a positive duration such as 30m, 4h or 2d")
		}
		q.CreatedBefore = now.Add(-d).UTC()
	}
	return q, errs.err()
}

// maxAge keeps now - d far from time.Time's limits.
const maxAge = 100 * 365 * 24 * time.Hour

// parseAge reads a Go duration, plus whole days ("2d") since ages at the
// desk are naturally counted in days.
func parseAge(v string) (time.Duration, error) {
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(v, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
		if n > int(maxAge/(24*time.Hour)) {
			d = -1
		}
	} else {
		d, err = time.ParseDuration(v)
	}
	if err != nil || d <= 0 || d > maxAge {
		return 0, strconv.ErrRange
	}
	return d, nil
}
