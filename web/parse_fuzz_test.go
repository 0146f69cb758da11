package web

import (
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// The desk's parsers — the queue's and the audit page's query strings, the
// decision forms — fuzzed. The seeds under testdata/fuzz (NUL, lone
// surrogates, invalid UTF-8, deep nesting, bad escapes) run with the plain
// test command; `go test -fuzz FuzzDesk… ./web/` explores further.

func getContext(rawQuery string) *gin.Context {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest("GET", "/desk/queue", nil)
	c.Request.URL.RawQuery = rawQuery
	return c
}

// FuzzDeskQueueQuery: any query string gives a filter the Ledger can run or
// a validation problem naming state or age — never a panic — and a filter
// that runs survives the round trip through the link the page shares.
func FuzzDeskQueueQuery(f *testing.F) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		c := getContext(raw)
		filter := queueFilter(c)
		q, err := queueQuery(filter, testPeople["ada"], c.Query("cursor"), now)
		if err != nil {
			e := domain.AsError(err)
			if e.Code != domain.EInvalid || len(e.Fields) != 1 || (e.Fields[0].Field != "state" && e.Fields[0].Field != "age") {
				t.Fatalf("%q: %v", raw, err)
			}
			return
		}
		if q.Limit != queuePageSize || len(q.States) == 0 {
			t.Fatalf("%q: query %+v", raw, q)
		}
		for _, st := range q.States {
			if !slices.Contains(domain.DeskStates, st) {
				t.Fatalf("%q: state %s is not a desk state", raw, st)
			}
		}
		if filter.Age != "" && !q.CreatedBefore.Before(now) {
			t.Fatalf("%q: age %q gave %v", raw, filter.Age, q.CreatedBefore)
		}
		link := queueURL(filter, c.Query("cursor"))
		back := getContext(strings.TrimPrefix(link, "/desk/queue?"))
		if queueFilter(back) != filter || back.Query("cursor") != c.Query("cursor") {
			t.Fatalf("%q: link %q reads back as %+v, want %+v", raw, link, queueFilter(back), filter)
		}
	})
}

// FuzzDeskAuditQuery: any query string gives an audit query or problems
// naming from or to, and a readable filter survives its link.
func FuzzDeskAuditQuery(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw string) {
		c := getContext(raw)
		filter, q, errs := auditFilter(c)
		for _, e := range errs {
			if e.Field != "from" && e.Field != "to" {
				t.Fatalf("%q: problem on %s", raw, e.Field)
			}
		}
		if len(errs) > 0 {
			return
		}
		if q.OperationID != filter.Operation || q.Actor != filter.Actor || q.Action != filter.Action {
			t.Fatalf("%q: query %+v from filter %+v", raw, q, filter)
		}
		link := auditURL(filter, q.Cursor)
		back, q2, errs := auditFilter(getContext(strings.TrimPrefix(link, "/desk/audit?")))
		if back != filter || len(errs) > 0 || !q2.From.Equal(q.From) || !q2.To.Equal(q.To) || q2.Cursor != q.Cursor {
			t.Fatalf("%q: link %q reads back as %+v %v", raw, link, back, errs)
		}
	})
}

// FuzzDeskForm: a decision form's body never panics its readers; the
// versions read are positive; the page it returns to is always a desk page;
// the revised content is canonical JSON or refused with a field named.
func FuzzDeskForm(f *testing.F) {
	f.Fuzz(func(t *testing.T, body string) {
		c, _ := gin.CreateTestContext(httptest.NewRecorder())
		c.Request = httptest.NewRequest("POST", "/desk/operations/op_1/approve", strings.NewReader(body))
		c.Request.Header.Set("Content-Type", "application/x-www-form-urlencoded")

		if v, errs := expectedVersion(c); (len(errs) == 0) != (v >= 1) || len(errs) > 0 && errs[0].Field != "expected_version" {
			t.Fatalf("%q: expected_version %d %v", body, v, errs)
		}
		if v, errs := contentVersion(c, nil); (len(errs) == 0) != (v >= 1) {
			t.Fatalf("%q: content_version %d %v", body, v, errs)
		}
		if a, err := domain.ParseResolveAction(c.PostForm("action")); err == nil && a.String() != c.PostForm("action") {
			t.Fatalf("%q: action %q read as %s", body, c.PostForm("action"), a)
		}
		back := returnTo(c, "/desk/operations/op_1")
		if !strings.HasPrefix(back, "/desk") || strings.HasPrefix(back, "//") || strings.Contains(back, `\`) {
			t.Fatalf("%q: returns to %q", body, back)
		}

		content := []byte(c.PostForm("content"))
		canon, err := domain.CanonicalObject(content)
		var deep *domain.NestingError
		switch {
		case errors.As(err, &deep):
			if strings.Count(deep.Path, ".")+strings.Count(deep.Path, "[") < domain.MaxNesting-1 {
				t.Fatalf("%q: nesting refused at a shallow path %q", body, deep.Path)
			}
		case err == nil:
			if !utf8.Valid(canon) || !json.Valid(canon) || canon[0] != '{' {
				t.Fatalf("%q: canonical content %q", body, canon)
			}
		}
	})
}
