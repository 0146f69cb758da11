package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// auditActions are the actions the filter offers: every transition and
// decision the ledger records, and the system stream's sign-ins.
var auditActions = []string{"registered", domain.ActionRegisteredAndClaimed, domain.ActionRegisteredAndBegan, "claimed", domain.ActionClaimedAndBegan, "heartbeat", "began", "settled", "lease_expired",
	"retries_exhausted", "reconciled", "reconcile_inconclusive", "resolved", "assigned", "noted", domain.ActionContradictionRecorded, "revised",
	"approved", "rejected", "signed_in", "signed_out"}

// auditPageSize is one screen of events.
const auditPageSize = 50

// localTime is the datetime-local input's format; the desk reads it as UTC.
const localTime = "2006-01-02T15:04"

// audit shows the audit trail across operations, system stream included,
// the latest first: what someone looks for there is what just happened.
func (s *server) audit(c *gin.Context) {
	f, q, errs := auditFilter(c)
	v := pages.AuditView{Frame: s.frameFor(c, "Audit", "audit"), Filter: f, Actions: []pages.Option{{Value: "", Label: "every action"}}}
	for _, a := range auditActions {
		v.Actions = append(v.Actions, pages.Option{Value: a, Label: a})
	}
	if audit.MayExport(me(c)) {
		v.ExportCSV, v.ExportJSONL = auditExportURL(f, audit.FormatCSV), auditExportURL(f, audit.FormatJSONL)
	}
	v.ActorNote = s.matchActor(c, &q)
	v.Zone = zoneLabel(c) // audit_zone.go
	var err error
	if len(errs) > 0 {
		err = domain.Invalid(errs...)
	} else {
		var evs []domain.AuditEvent
		var next string
		evs, next, err = s.auditPage(c, q)
		for _, e := range evs {
			v.Rows = append(v.Rows, eventRow(e))
		}
		if next != "" {
			v.Next = auditURL(f, next)
		}
	}
	if err != nil {
		v.Problem = s.message(c, err) // shown beside the form, as in the queue
	} else {
		v.Views = s.savedViews(c, "audit", viewFilter("audit", c.Query), auditURL(f, c.Query("cursor")))
	}
	page(c, http.StatusOK, pages.Audit(v), pages.AuditResults(v))
}

// auditFilter reads the audit filter from the URL, as the page and the
// export share it.
func auditFilter(c *gin.Context) (pages.AuditFilter, domain.AuditQuery, []domain.FieldError) {
	f := pages.AuditFilter{Operation: strings.TrimSpace(c.Query("operation")), Actor: strings.TrimSpace(c.Query("actor")),
		Action: c.Query("action"), From: c.Query("from"), To: c.Query("to"), People: c.Query("people") != ""}
	q := domain.AuditQuery{OperationID: f.Operation, Actor: f.Actor, Action: f.Action, PeopleOnly: f.People, Cursor: c.Query("cursor")}
	var errs []domain.FieldError
	q.From, errs = auditTime("from", f.From, errs)
	q.To, errs = auditTime("to", f.To, errs)
	q.From, q.To = inZone(c, f.From, q.From), inZone(c, f.To, q.To) // audit_zone.go
	return f, q, errs
}

// auditPage is one page of the audit trail, as GET /v1/audit reads it.
func (s *server) auditPage(c *gin.Context, q domain.AuditQuery) ([]domain.AuditEvent, string, error) {
	trail := audit.OfLedger(s.ledger)
	q.Limit = auditPageSize
	return trail.List(c.Request.Context(), me(c), domain.AuditSelect{AuditQuery: q, WithSystem: true, NewestFirst: true})
}

// auditTime reads a filter time: the datetime-local form, or RFC 3339.
func auditTime(field, v string, errs []domain.FieldError) (time.Time, []domain.FieldError) {
	if v == "" {
		return time.Time{}, errs
	}
	for _, layout := range []string{localTime, time.RFC3339} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), errs
		}
	}
	return time.Time{}, append(errs, domain.FieldError{Field: field, Message: "must be a time such as 2026-01-31T14:00 (UTC)"})
}

func auditURL(f pages.AuditFilter, cursor string) string {
	vals := url.Values{}
	for k, v := range map[string]string{"operation": f.Operation, "actor": f.Actor, "action": f.Action,
		"from": f.From, "to": f.To, "cursor": cursor} {
		if v != "" {
			vals.Set(k, v)
		}
	}
	if f.People {
		vals.Set("people", "1")
	}
	return "/desk/audit?" + vals.Encode()
}

// auditExportURL is the Export button's link: the page's filter and a format.
func auditExportURL(f pages.AuditFilter, format string) string {
	vals := url.Values{"format": {format}}
	for k, v := range map[string]string{"operation": f.Operation, "actor": f.Actor, "action": f.Action, "from": f.From, "to": f.To} {
		if v != "" {
			vals.Set(k, v)
		}
	}
	if f.People {
		vals.Set("people", "1")
	}
	return "/desk/audit/export?" + vals.Encode()
}

// matchActor reads the Actor filter as a person would mean it: when what
// was typed is no person's email, name or subject exactly, but a part of
// exactly one person's, in any case ("ann", "ANN@EXAMPLE.COM"), the filter
// is that person's email. The trail is then still read through its exact
// actor indexes. It says what it did, or why it did not, for the page.
func (s *server) matchActor(c *gin.Context, q *domain.AuditQuery) string {
	typed := q.Actor
	if typed == "" {
		return ""
	}
	ps, err := s.ledger.Desk.People(c.Request.Context(), me(c), domain.PeopleQuery{Text: typed, Limit: 6})
	if err != nil || len(ps) == 0 {
		return ""
	}
	var names []string
	for _, p := range ps {
		if p.Email == typed || p.Name == typed || p.Subject == typed {
			return "" // an exact actor: read as typed
		}
		names = append(names, p.Label())
	}
	if len(ps) > 1 {
		return fmt.Sprintf("%q is part of %d people's names: %s. Only an actor named exactly %q is shown; type more of one.",
			typed, len(ps), strings.Join(names, ", "), typed)
	}
	q.Actor = ps[0].Email
	if q.Actor == "" {
		q.Actor = ps[0].Subject
	}
	return "Showing " + ps[0].Label() + ", the one person whose email, name or subject contains " + strconv.Quote(typed) + "."
}
