package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// attemptJSON is one try at an operation.
type attemptJSON struct {
	ID     string `json:"id"`
	Number int    `json:"number"`
	Worker string `json:"worker"`
	// ProviderKey is the key the attempt was given to send.
	ProviderKey *string    `json:"provider_key" doc:"the provider key the attempt was given to send (a revision of content already sent goes out under a new one); null for attempts recorded before it was kept"`
	ClaimedAt   time.Time  `json:"claimed_at"`
	BeganAt     *time.Time `json:"began_at"`
	SettledAt   *time.Time `json:"settled_at"`
	Outcome     *string    `json:"outcome" doc:"the state the attempt ended in, or lease_expired; null while it runs"`
	Error       *errorJSON `json:"error"`
}

func toAttempt(a domain.Attempt) attemptJSON {
	return attemptJSON{ID: a.ID, Number: a.Number, Worker: a.Worker, ProviderKey: nullIfEmpty(a.ProviderKey), ClaimedAt: a.ClaimedAt.UTC(),
		BeganAt: utcOrNil(a.BeganAt), SettledAt: utcOrNil(a.SettledAt), Outcome: nullIfEmpty(a.Outcome), Error: toErrorJSON(a.Error)}
}

type attemptList struct {
	Items []attemptJSON `json:"items" schema:"required"`
}

func (s *server) attempts(c *gin.Context) {
	as, err := s.ledger.Workflow.Attempts(c.Request.Context(), actorOf(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := attemptList{Items: []attemptJSON{}}
	for _, a := range as {
		out.Items = append(out.Items, toAttempt(a))
	}
	s.render(c, http.StatusOK, out)
}
