package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// titles are the short, fixed summaries of each problem type.
var titles = map[domain.Code]string{
	domain.EInvalid:            "The request is not valid",
	domain.EInvalidJSON:        "The body is not valid JSON",
	domain.EUnauthenticated:    "Authentication required",
	domain.EForbidden:          "Not allowed",
	domain.ENotFound:           "Not found",
	domain.EFingerprint:        "Key reused with different content",
	domain.EUnknownType:        "Unknown operation type",
	domain.ENotClaimable:       "The operation cannot be claimed now",
	domain.EStaleLease:         "The lease is no longer current",
	domain.EInvalidTransition:  "Not allowed in the current state",
	domain.EVersionConflict:    "The operation changed since it was loaded",
	domain.EOriginalUnresolved: "The superseded operation is not cancelled",
	domain.EConflict:           "A concurrent change won",
	domain.ETooLarge:           "Payload too large",
	domain.EUnavailable:        "Service unavailable",
	domain.EInternal:           "Internal error",
}

// Status is the HTTP status of a domain error code: the one table in
// domain/error_status.go, shared with the desk.
func Status(code domain.Code) int { return domain.HTTPStatus(code) }

// defaultRetryAfter is what 503 answers advise when the cause gave no hint.
const defaultRetryAfter = 2

// problem is an RFC 9457 problem details body with Handoff's extensions.
type problem struct {
	Type      string         `json:"type" schema:"required"`
	Title     string         `json:"title" schema:"required"`
	Status    int            `json:"status" schema:"required"`
	Code      string         `json:"code" schema:"required,enum=codes"`
	Detail    string         `json:"detail,omitempty"`
	RequestID string         `json:"request_id,omitempty"`
	Operation *operationJSON `json:"operation,omitempty" doc:"the operation involved, where there is one"`
	Reason    string         `json:"reason,omitempty" schema:"enum=refusals" doc:"why not_claimable"`
	Errors    []fieldJSON    `json:"errors,omitempty" doc:"each bad field"`
}

type fieldJSON struct {
	Field   string `json:"field" schema:"required"`
	Message string `json:"message" schema:"required"`
}

// toProblem converts err; internal details never reach the body.
func toProblem(err error, requestID string) (*domain.Error, problem) {
	e := domain.AsError(err)
	status := Status(e.Code)
	p := problem{Type: "/problems/" + strings.ReplaceAll(string(e.Code), "_", "-"), Title: titles[e.Code],
		Status: status, Code: string(e.Code), Detail: e.Message, RequestID: requestID}
	if status == http.StatusInternalServerError {
		p.Type, p.Title, p.Code, p.Detail = "/problems/internal", titles[domain.EInternal], string(domain.EInternal), "internal error"
		return e, p
	}
	if e.Operation != nil {
		p.Operation = toOperation(*e.Operation, false)
	}
	if !e.Reason.IsZero() {
		p.Reason = e.Reason.String()
	}
	for _, f := range e.Fields {
		p.Errors = append(p.Errors, fieldJSON{Field: f.Field, Message: f.Message})
	}
	return e, p
}

// fail answers err as problem+json, logging what clients must not see.
func (s *server) fail(c *gin.Context, err error) {
	rid := requestID(c)
	e, p := toProblem(err, rid)
	switch p.Status {
	case http.StatusInternalServerError:
		s.log.ErrorContext(c.Request.Context(), "internal error", "request_id", rid, "error", e.Error())
	case http.StatusServiceUnavailable:
		s.log.WarnContext(c.Request.Context(), "unavailable", "request_id", rid, "error", e.Error())
	}
	h := c.Writer.Header()
	switch {
	case p.Status == http.StatusUnauthorized:
		h.Set("WWW-Authenticate", `Bearer realm="handoff"`)
	case p.Status == http.StatusServiceUnavailable:
		h.Set("Retry-After", strconv.Itoa(max(e.RetryAfterSeconds, defaultRetryAfter)))
	case e.RetryAfterSeconds > 0 && e.Reason == domain.RefusedRetryLater:
		h.Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
	}
	body, merr := json.Marshal(p)
	if merr != nil { // only an operation holding invalid raw JSON could do this
		s.log.ErrorContext(c.Request.Context(), "problem does not marshal", "request_id", rid, "error", merr)
		body = []byte(`{"type":"/problems/internal","title":"Internal error","status":500,"code":"internal","detail":"internal error"}`)
		p.Status = http.StatusInternalServerError
	}
	c.Data(p.Status, "application/problem+json", body)
	c.Abort()
}
