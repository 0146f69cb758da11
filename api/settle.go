package api

import (
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// Bounds on free text a worker reports; they keep the timeline readable and
// the rows small. Content and result data are bounded by the body limit.
const (
	maxRefLen      = 1000
	maxMessageLen  = 4000
	maxCodeLen     = 200
	maxRetryAfter  = 7 * 24 * 3600
	maxEvidenceLen = 4000
)

type beginRequest struct {
	LeaseToken *int64 `json:"lease_token" schema:"required"`
}

func parseBegin(data []byte) (domain.Begin, error) {
	var req beginRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Begin{}, err
	}
	var errs fieldErrs
	return domain.Begin{LeaseToken: leaseToken(&errs, req.LeaseToken)}, errs.err()
}

// settleRequest is POST /v1/operations/{id}/settle.
type settleRequest struct {
	LeaseToken *int64           `json:"lease_token" schema:"required"`
	Outcome    string           `json:"outcome" schema:"required,enum=outcomes"`
	Result     *resultJSON      `json:"result" doc:"required with outcome completed"`
	Error      *settleErrorJSON `json:"error"`
}

type settleErrorJSON struct {
	Class             string `json:"class" schema:"required,enum=classes"`
	Code              string `json:"code" schema:"maxlen=200"`
	Message           string `json:"message" schema:"maxlen=4000"`
	RetryAfterSeconds *int   `json:"retry_after_seconds" schema:"min=0,max=604800" doc:"the provider's Retry-After; the next attempt waits at least this long"`
}

func parseSettle(data []byte) (domain.Settle, error) {
	var req settleRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Settle{}, err
	}
	var errs fieldErrs
	s := domain.Settle{LeaseToken: leaseToken(&errs, req.LeaseToken), Result: parseResult(&errs, "result", req.Result)}
	var err error
	if s.Outcome, err = domain.ParseOutcome(req.Outcome); err != nil {
		errs.add("outcome", "must be one of %s", strings.Join(enumValues["outcomes"], ", "))
	}
	if e := req.Error; e != nil {
		info := domain.ErrorInfo{Code: e.Code, Message: e.Message}
		if info.Class, err = domain.ParseErrorClass(e.Class); err != nil {
			errs.add("error.class", "must be one of %s", strings.Join(enumValues["classes"], ", "))
		}
		errs.maxLen("error.code", e.Code, maxCodeLen)
		errs.maxLen("error.message", e.Message, maxMessageLen)
		if r := e.RetryAfterSeconds; r != nil && (*r < 0 || *r > maxRetryAfter) {
			errs.add("error.retry_after_seconds", "must be between 0 and %d", maxRetryAfter)
		} else if r != nil {
			s.RetryAfter = time.Duration(*r) * time.Second
		}
		s.Error = &info
	}
	return s, errs.err()
}

// settle is POST /v1/operations/{id}/settle: a settle repeated after it
// committed is answered as it was, marked as a replay.
func (s *server) settle(c *gin.Context) {
	cmd, ok := bind(s, c, parseSettle)
	if !ok {
		return
	}
	op, replayed, err := s.ledger.Workflow.SettleOnce(c.Request.Context(), actorOf(c), c.Param("id"), cmd)
	if replayed {
		c.Header("Idempotent-Replayed", "true")
	}
	s.renderOperation(c, op, err)
}

// parseResult converts an optional result; a sent result needs its ref.
func parseResult(errs *fieldErrs, field string, r *resultJSON) *domain.Result {
	if r == nil {
		return nil
	}
	if r.Ref == "" || len(r.Ref) > maxRefLen {
		errs.add(field+".ref", "must be 1-%d bytes", maxRefLen)
	}
	return &domain.Result{Ref: r.Ref, Data: object(r.Data)}
}

// reconcileRequest is POST /v1/operations/{id}/reconcile.
type reconcileRequest struct {
	Found    *bool       `json:"found" schema:"required"`
	Result   *resultJSON `json:"result" doc:"required when found"`
	Evidence string      `json:"evidence" schema:"maxlen=4000" doc:"what was looked up and seen, for the person who decides"`
}

func parseReconcile(data []byte) (domain.Reconcile, error) {
	var req reconcileRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Reconcile{}, err
	}
	var errs fieldErrs
	if req.Found == nil {
		errs.add("found", "is required")
	}
	errs.maxLen("evidence", req.Evidence, maxEvidenceLen)
	r := domain.Reconcile{Found: req.Found != nil && *req.Found, Evidence: req.Evidence,
		Result: parseResult(&errs, "result", req.Result)}
	return r, errs.err()
}
