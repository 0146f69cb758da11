package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// registerRequest is POST /v1/operations. Optional strings may be null.
type registerRequest struct {
	Key           string          `json:"key" schema:"required,pattern=key"`
	Type          string          `json:"type" schema:"required"`
	Content       json.RawMessage `json:"content" schema:"required,object"`
	EventID       string          `json:"event_id" schema:"pattern=key"`
	Source        string          `json:"source" schema:"maxlen=255"`
	CorrelationID string          `json:"correlation_id" schema:"maxlen=255"`
	CausedBy      string          `json:"caused_by" schema:"pattern=key" doc:"key of the operation whose side effect triggered this one"`
	Supersedes    string          `json:"supersedes" doc:"id of the cancelled operation this one replaces"`
	ProviderKey   string          `json:"provider_key" schema:"maxlen=255" doc:"derived from the key when absent"`
	Claim         *claimRequest   `json:"claim" doc:"claim in the same transaction when claimable"`
}

// parseRegister decodes a registration. The domain validates key, type and
// content; here only what the wire shape itself can get wrong is checked.
func parseRegister(data []byte) (domain.Registration, error) {
	var req registerRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Registration{}, err
	}
	reg := domain.Registration{Key: req.Key, Type: req.Type, Content: object(req.Content), EventID: req.EventID,
		Source: req.Source, CorrelationID: req.CorrelationID, CausedBy: req.CausedBy,
		Supersedes: req.Supersedes, ProviderKey: req.ProviderKey}
	var errs fieldErrs
	if isNull(req.Content) {
		errs.add("content", "must be a JSON object")
	}
	if req.Claim != nil {
		cl, cerrs := req.Claim.toDomain("claim.")
		errs = append(errs, cerrs...)
		reg.Claim = &cl
	}
	errs.maxLen("supersedes", req.Supersedes, 255)
	return reg, errs.err()
}

// registerResponse is the operation, plus the claim when one was asked for.
type registerResponse struct {
	*operationJSON
	// Claim is nil (absent) when no claim was asked, and a typed nil
	// pointer — rendered null — when it was refused.
	Claim        any               `json:"claim,omitempty" schema:"ref=ClaimResponse,nullable" doc:"present when claim was asked: the claim, or null when refused"`
	ClaimRefused *claimRefusedJSON `json:"claim_refused,omitempty"`
}

type claimRefusedJSON struct {
	Reason            string `json:"reason" schema:"required,enum=refusals"`
	Detail            string `json:"detail"`
	RetryAfterSeconds int    `json:"retry_after_seconds,omitempty" doc:"with reason retry_later"`
}

func toRegisterResponse(r domain.RegisterResult) registerResponse {
	out := registerResponse{operationJSON: toOperation(r.Operation, false)}
	switch {
	case r.Claim != nil:
		out.Claim = toClaim(*r.Claim, false)
	case r.ClaimRefused != nil:
		out.Claim = (*claimJSON)(nil)
		out.ClaimRefused = &claimRefusedJSON{Reason: r.ClaimRefused.Reason.String(),
			Detail: r.ClaimRefused.Message, RetryAfterSeconds: r.ClaimRefused.RetryAfterSeconds}
	}
	return out
}

func (s *server) register(c *gin.Context) {
	reg, ok := bind(s, c, parseRegister)
	if !ok {
		return
	}
	res, err := s.ledger.Workflow.Register(c.Request.Context(), actorOf(c), reg)
	if err != nil {
		s.fail(c, err)
		return
	}
	status := http.StatusCreated
	if res.Created {
		c.Header("Location", "/v1/operations/"+res.Operation.ID)
	} else {
		status = http.StatusOK
		c.Header("Idempotent-Replayed", "true")
	}
	if r := res.ClaimRefused; r != nil && r.RetryAfterSeconds > 0 {
		c.Header("Retry-After", strconv.Itoa(r.RetryAfterSeconds))
	}
	s.render(c, status, toRegisterResponse(res))
}

// leaseDuration converts lease_seconds: omitted is 0 (the card's default);
// sent, it must be 1..3600.
func leaseDuration(errs *fieldErrs, field string, secs *int) time.Duration {
	if secs == nil {
		return 0
	}
	if *secs < 1 || *secs > domain.MaxLease {
		errs.add(field, "must be between 1 and %d seconds", domain.MaxLease)
		return 0
	}
	return time.Duration(*secs) * time.Second
}
