package api

import (
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
)

// The audit trail across operations: GET /v1/audit pages through it (any
// person with a role; a workflow token sees its own namespace's operation
// events, as its timelines already do, and never the system stream), and
// GET /v1/audit/export streams it whole (auditor or admin).

// auditRecordJSON is one event of the trail with its place in its stream.
// Like the timeline it leaves out the client address, which the export
// (auditor role) carries.
type auditRecordJSON struct {
	auditEventJSON
	Stream      string  `json:"stream" doc:"the operation's id, or system"`
	OperationID *string `json:"operation_id"`
	Namespace   *string `json:"namespace"`
}

type auditPage struct {
	Items      []auditRecordJSON `json:"items" schema:"required"`
	NextCursor *string           `json:"next_cursor"`
}

var auditQueryParams = []param{
	{Name: "operation_id"}, {Name: "actor", Desc: "the actor's email, subject or name"},
	{Name: "action", Desc: "e.g. settled, resolved, token_created, checkpoint"},
	{Name: "from", Desc: "RFC 3339; events at or after"}, {Name: "to", Desc: "RFC 3339; events before"},
	{Name: "limit", Desc: "1-200, default 50", Type: "integer"},
	{Name: "cursor", Desc: "next_cursor of the previous page"},
}

var auditExportParams = []param{
	{Name: "format", Desc: "jsonl (default) or csv"},
	{Name: "from", Desc: "RFC 3339; events at or after"}, {Name: "to", Desc: "RFC 3339; events before"},
	{Name: "namespace", Desc: "that namespace's operation streams, and the system stream"},
}

func (s *server) listAudit(c *gin.Context) {
	var q domain.AuditSelect
	vals, errs := strictQuery(c.Request.URL.RawQuery, auditQueryParams)
	q.OperationID, q.Actor, q.Action, q.Cursor = vals.Get("operation_id"), vals.Get("actor"), vals.Get("action"), vals.Get("cursor")
	q.From, q.To = queryTime(vals, "from", &errs), queryTime(vals, "to", &errs)
	q.Limit = defaultListLimit
	if v := vals.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxListLimit {
			errs.add("limit", "must be an integer between 1 and %d", maxListLimit)
		}
		q.Limit = n
	}
	trail := audit.OfLedger(s.ledger)
	if err := errs.err(); err != nil {
		s.fail(c, err)
		return
	}
	evs, next, err := trail.List(c.Request.Context(), actorOf(c), q)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := auditPage{Items: make([]auditRecordJSON, 0, len(evs)), NextCursor: nullIfEmpty(next)}
	for _, e := range evs {
		out.Items = append(out.Items, auditRecordJSON{auditEventJSON: toAuditEvent(e), Stream: e.Stream,
			OperationID: nullIfEmpty(e.OperationID), Namespace: nullIfEmpty(e.Namespace)})
	}
	s.render(c, http.StatusOK, out)
}

func (s *server) exportAudit(c *gin.Context) {
	vals, errs := strictQuery(c.Request.URL.RawQuery, auditExportParams)
	req := audit.Export{Format: vals.Get("format")}
	req.Query.Namespace = vals.Get("namespace")
	req.Query.From, req.Query.To = queryTime(vals, "from", &errs), queryTime(vals, "to", &errs)
	if req.Format == "" {
		req.Format = audit.FormatJSONL
	}
	sink, ferr := audit.NewEncoder(chunkDeadline{c.Writer, s.exportChunkTimeout}, req.Format)
	trail := audit.OfLedger(s.ledger)
	err := ferr
	if err == nil {
		err = errs.err()
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	w := &httpExport{Sink: sink, c: c, format: req.Format}
	if err := trail.Export(c.Request.Context(), actorOf(c), req, w); err != nil {
		if !w.started {
			s.fail(c, err)
			return
		}
		// The body is half-sent: break the connection, so the client sees a
		// truncated download rather than a complete-looking file.
		s.log.ErrorContext(c.Request.Context(), "audit export failed", "request_id", requestID(c), "error", err)
		panic(http.ErrAbortHandler)
	}
}

// httpExport sends the headers once the export is authorised and recorded.
type httpExport struct {
	audit.Sink
	c       *gin.Context
	format  string
	started bool
}

func (w *httpExport) Begin() error {
	w.started = true
	media, ext := "application/x-ndjson", "jsonl"
	if w.format == audit.FormatCSV {
		media, ext = "text/csv; charset=utf-8; header=present", "csv"
	}
	h := w.c.Writer.Header()
	h.Set("Content-Type", media)
	h.Set("Content-Disposition", `attachment; filename="handoff-audit-`+time.Now().UTC().Format("20060102T150405Z")+"."+ext+`"`)
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.c.Status(http.StatusOK)
	return w.Sink.Begin()
}

// chunkDeadline gives each write of an export its own deadline. A long
// export outlives the server's write timeout, which is sized for ordinary
// answers; a reader that stops reading must not hold the export open for
// ever: its write fails after the timeout and the handler lets go.
type chunkDeadline struct {
	w       gin.ResponseWriter
	timeout time.Duration
}

func (d chunkDeadline) Write(p []byte) (int, error) {
	if err := http.NewResponseController(d.w).SetWriteDeadline(time.Now().Add(d.timeout)); err != nil {
		slog.Debug("audit export keeps the server's write deadline", "error", err)
	}
	return d.w.Write(p)
}

// strictQuery parses a query string, refusing unknown and repeated
// parameters as the operation list does.
func strictQuery(raw string, known []param) (url.Values, fieldErrs) {
	var errs fieldErrs
	vals, err := url.ParseQuery(raw)
	if err != nil {
		errs.add("query", "is not a valid query string")
		return url.Values{}, errs
	}
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		switch {
		case !slices.ContainsFunc(known, func(p param) bool { return p.Name == name }):
			errs.add(name, "is not a known query parameter")
		case len(vals[name]) > 1:
			errs.add(name, "may be given once")
		case len(vals.Get(name)) > 1000 || !utf8.ValidString(vals.Get(name)):
			errs.add(name, "must be valid text of at most 1000 bytes")
		}
	}
	return vals, errs
}

func queryTime(vals url.Values, name string, errs *fieldErrs) time.Time {
	v := vals.Get(name)
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		errs.add(name, "must be an RFC 3339 time such as 2026-01-31T14:00:00Z")
	}
	return t.UTC()
}
