package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// POST /v1/batches: one decision for many desk items, as the desk's bulk
// decisions take it (domain/batch.go).

type batchItemJSON struct {
	ID              string `json:"id" schema:"required,minlen=1,maxlen=64"`
	ExpectedVersion *int64 `json:"expected_version" schema:"min=1" doc:"the version you saw; required except for notes"`
}

type batchDecisionJSON struct {
	Type     string          `json:"type" schema:"required,enum=batch_types" doc:"resolve, assign or note (the reason is the note's text)"`
	Action   string          `json:"action" schema:"enum=batch_actions" doc:"with resolve"`
	Then     string          `json:"then" schema:"enum=then_actions" doc:"after confirm_not_executed"`
	Assignee json.RawMessage `json:"assignee" schema:"nullable,string" doc:"with assign: the email (or subject) of someone who signed in to the desk and can decide; null unassigns"`
}

type batchRequest struct {
	Operations []batchItemJSON   `json:"operations" schema:"required,minitems=1,maxitems=1000"`
	Decision   batchDecisionJSON `json:"decision" schema:"required"`
	Reason     string            `json:"reason" schema:"required,minlen=1,maxlen=2000"`
	Preview    bool              `json:"preview" doc:"say what would happen to each item, change nothing"`
}

type batchItemResultJSON struct {
	ID      string  `json:"id"`
	Key     *string `json:"key"`
	From    *string `json:"from_state"`
	To      *string `json:"to_state"`
	Version int64   `json:"version"`
	Outcome string  `json:"outcome" schema:"enum=batch_outcomes"`
	Reason  *string `json:"reason" doc:"why it is skipped"`
	Code    *string `json:"code" doc:"the problem code of the refusal, such as version_conflict"`
}

type batchResponse struct {
	BatchID string                `json:"batch_id"`
	Preview bool                  `json:"preview"`
	Applied int                   `json:"applied" doc:"with preview, how many would apply"`
	Skipped int                   `json:"skipped"`
	Items   []batchItemResultJSON `json:"items"`
}

// batchBody is a batch request as read: the batch, and the identity an
// assign decision names, which the Ledger resolves to a person.
type batchBody struct {
	domain.Batch
	Assignee string
}

func parseBatch(data []byte) (batchBody, error) {
	var req batchRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return batchBody{}, err
	}
	var errs fieldErrs
	if len(req.Operations) > domain.MaxBatch {
		errs.add("operations", "may name at most %d operations, not %d", domain.MaxBatch, len(req.Operations))
	}
	// The API's resolve asks no confirmation of a retry's risk, and neither
	// does its batch: the confirmation is the desk's second click.
	b := domain.Batch{Kind: domain.BatchKind(req.Decision.Type), Reason: req.Reason, Preview: req.Preview, RiskConfirmed: true}
	for _, it := range req.Operations {
		item := domain.BatchItem{ID: it.ID}
		if it.ExpectedVersion != nil {
			item.ExpectedVersion = *it.ExpectedVersion
		}
		b.Items = append(b.Items, item)
	}
	var err error
	if req.Decision.Action != "" {
		if b.Action, err = domain.ParseResolveAction(req.Decision.Action); err != nil {
			errs.add("decision.action", "must be one of %s", strings.Join(enumValues["batch_actions"], ", "))
		}
	}
	if req.Decision.Then != "" {
		if b.Then, err = domain.ParseResolveAction(req.Decision.Then); err != nil {
			errs.add("decision.then", "must be retry or cancel")
		}
	}
	body := batchBody{Batch: b}
	if len(req.Decision.Assignee) > 0 && !isNull(req.Decision.Assignee) {
		body.Assignee = assigneeText(&errs, "decision.assignee", req.Decision.Assignee)
	}
	return body, errs.err()
}

// batch applies (or previews) one decision to many operations.
func (s *server) batch(c *gin.Context) {
	b, ok := bind(s, c, parseBatch)
	if !ok {
		return
	}
	if b.Kind == domain.BatchAssign {
		var err error
		if b.Batch.Assignee, err = s.ledger.Desk.Assignee(c.Request.Context(), actorOf(c), b.Assignee); err != nil {
			s.fail(c, renamed(err, "assignee", "decision.assignee"))
			return
		}
	}
	res, err := s.ledger.Bulk.Batch(c.Request.Context(), actorOf(c), b.Batch)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, toBatchResponse(res))
}

// toBatchResponse is the batch's answer: its counts, and per item the
// outcome and, where there is one, the move and the refusal.
func toBatchResponse(res domain.BatchResult) batchResponse {
	out := batchResponse{BatchID: res.ID, Preview: res.Preview, Applied: res.Applied, Skipped: res.Skipped,
		Items: make([]batchItemResultJSON, len(res.Items))}
	for i, r := range res.Items {
		j := batchItemResultJSON{ID: r.ID, Version: r.Version, Outcome: r.Outcome, Key: nonEmpty(r.Key),
			Reason: nonEmpty(r.Why)}
		if r.From != (domain.State{}) {
			j.From = nonEmpty(r.From.String())
		}
		if r.To != (domain.State{}) {
			j.To = nonEmpty(r.To.String())
		}
		if r.Code != "" {
			j.Code = nonEmpty(fmt.Sprint(r.Code))
		}
		out.Items[i] = j
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// renamed is err with the field errors on from named to: a field as the
// request's body spells it.
func renamed(err error, from, to string) error {
	e, ok := err.(*domain.Error)
	if !ok {
		return err
	}
	c := *e
	c.Fields = slices.Clone(e.Fields)
	for i := range c.Fields {
		if c.Fields[i].Field == from {
			c.Fields[i].Field = to
		}
	}
	return &c
}
