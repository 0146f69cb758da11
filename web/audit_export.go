package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
)

// auditExport streams the audit events the page's filter selects, as CSV
// or JSONL, with every chain field; the export is itself an audit event.
// Only auditors and admins may export: the check comes before any byte is
// written, so a refusal is a page, not half a file.
func (s *server) auditExport(c *gin.Context) {
	_, q, errs := auditFilter(c)
	s.matchActor(c, &q)
	format := c.DefaultQuery("format", audit.FormatCSV)
	person := me(c)
	trail := audit.OfLedger(s.ledger)
	if err := exportRefusal(errs, person, format); err != nil {
		s.fail(c, err)
		return
	}
	contentType := "text/csv; charset=utf-8"
	if format == audit.FormatJSONL {
		contentType = "application/jsonl; charset=utf-8"
	}
	c.Header("Content-Type", contentType)
	c.Header("Content-Disposition", `attachment; filename="handoff-audit.`+format+`"`)
	c.Status(http.StatusOK)
	sink, err := audit.NewEncoder(c.Writer, format)
	if err == nil {
		err = trail.Export(c.Request.Context(), person, audit.Export{Query: domain.AuditSelect{AuditQuery: q}, Format: format}, sink)
	}
	if err != nil { // the status is sent: say so in the log; the file's last line will not verify
		s.log.ErrorContext(c.Request.Context(), "audit export failed", "err", err)
	}
}

// exportRefusal is why the export cannot start: a filter that cannot be
// read, a person who may not export, or a format other than CSV and JSONL;
// nil when it can.
func exportRefusal(errs []domain.FieldError, person domain.Actor, format string) error {
	switch {
	case len(errs) > 0:
		return domain.Invalid(errs...)
	case !audit.MayExport(person):
		return domain.Errorf(domain.EForbidden, "exporting the audit trail needs the auditor or admin role")
	case format != audit.FormatCSV && format != audit.FormatJSONL:
		return domain.Invalid(domain.FieldError{Field: "format", Message: "must be csv or jsonl"})
	}
	return nil
}
