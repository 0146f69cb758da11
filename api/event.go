package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// eventRequest is POST /v1/events: one operation per action, keyed
// "<event_id>:<action>".
type eventRequest struct {
	EventID       string               `json:"event_id" schema:"required,pattern=key"`
	Source        string               `json:"source" schema:"maxlen=255"`
	CorrelationID string               `json:"correlation_id" schema:"maxlen=255"`
	Actions       []eventActionRequest `json:"actions" schema:"required,minitems=1,maxitems=50"`
}

type eventActionRequest struct {
	Action  string          `json:"action" schema:"required,minlen=1"`
	Type    string          `json:"type" schema:"required"`
	Content json.RawMessage `json:"content" schema:"required,object"`
}

func parseEvent(data []byte) (domain.EventRegistration, error) {
	var req eventRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.EventRegistration{}, err
	}
	r := domain.EventRegistration{EventID: req.EventID, Source: req.Source, CorrelationID: req.CorrelationID}
	for _, a := range req.Actions {
		r.Actions = append(r.Actions, domain.EventAction{Action: a.Action, Type: a.Type, Content: a.Content})
	}
	return r, nil // the domain validates the event and each action
}

// eventJSON is an event with each action's operation as it is now.
type eventJSON struct {
	EventID       string           `json:"event_id"`
	Source        *string          `json:"source"`
	CorrelationID *string          `json:"correlation_id"`
	ReceivedAt    time.Time        `json:"received_at"`
	Operations    []*operationJSON `json:"operations"`
}

func toEvent(r domain.EventResult) eventJSON {
	return eventJSON{EventID: r.Event.EventID, Source: nullIfEmpty(r.Event.Source), CorrelationID: nullIfEmpty(r.Event.CorrelationID),
		ReceivedAt: r.Event.ReceivedAt.UTC(), Operations: toOperations(r.Operations)}
}

func (s *server) registerEvent(c *gin.Context) {
	ev, ok := bind(s, c, parseEvent)
	if !ok {
		return
	}
	res, err := s.ledger.Workflow.RegisterEvent(c.Request.Context(), actorOf(c), ev)
	if err != nil {
		s.fail(c, err)
		return
	}
	status := http.StatusCreated
	if !res.Created {
		status = http.StatusOK
		c.Header("Idempotent-Replayed", "true")
	}
	s.render(c, status, toEvent(res))
}

func (s *server) getEvent(c *gin.Context) {
	res, err := s.ledger.Workflow.GetEvent(c.Request.Context(), actorOf(c), c.Param("event_id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, toEvent(res))
}
