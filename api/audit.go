package api

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// auditEventJSON is one entry of an operation's timeline. The client
// address is left to the audit export (auditor role): a workflow token
// reading its timeline has no business with a person's IP address.
type auditEventJSON struct {
	ID        string          `json:"id"`
	Seq       int64           `json:"seq"`
	At        time.Time       `json:"at"`
	Actor     actorJSON       `json:"actor"`
	Action    string          `json:"action"`
	FromState *string         `json:"from_state" schema:"enum=states"`
	ToState   *string         `json:"to_state" schema:"enum=states"`
	Reason    *string         `json:"reason"`
	Detail    json.RawMessage `json:"detail" schema:"object,nullable" doc:"evidence, error or result: what the reader needs; null when the event has none"`
	RequestID *string         `json:"request_id"`
	PrevHash  string          `json:"prev_hash"`
	Hash      string          `json:"hash"`
}

type actorJSON struct {
	Kind      string  `json:"kind" schema:"enum=actor_kinds"`
	Name      string  `json:"name"`
	Namespace *string `json:"namespace"`
	Email     *string `json:"email"`
	Role      *string `json:"role" schema:"enum=roles"`
	// A person as their identity provider names them, as the export has it.
	Issuer  *string `json:"issuer"`
	Subject *string `json:"subject"`
}

func toAuditEvent(e domain.AuditEvent) auditEventJSON {
	return auditEventJSON{ID: e.ID, Seq: e.Seq, At: e.At.UTC(),
		Actor: actorJSON{Kind: e.Actor.Kind.String(), Name: e.Actor.Identity(), Namespace: nullIfEmpty(e.Actor.Namespace),
			Email: nullIfEmpty(e.Actor.Email), Role: nullIfEmpty(e.Actor.Role.String()), Issuer: nullIfEmpty(e.Actor.Issuer), Subject: nullIfEmpty(e.Actor.Subject)},
		Action: e.Action, FromState: nullIfEmpty(e.FromState), ToState: nullIfEmpty(e.ToState), Reason: nullIfEmpty(e.Reason),
		Detail: object(e.Detail), RequestID: nullIfEmpty(e.RequestID), PrevHash: e.PrevHash, Hash: e.Hash}
}

type timeline struct {
	Items []auditEventJSON `json:"items" schema:"required"`
}

func (s *server) timeline(c *gin.Context) {
	evs, err := s.ledger.Workflow.Timeline(c.Request.Context(), actorOf(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := timeline{Items: []auditEventJSON{}}
	for _, e := range evs {
		out.Items = append(out.Items, toAuditEvent(e))
	}
	s.render(c, http.StatusOK, out)
}
