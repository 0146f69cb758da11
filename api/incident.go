package api

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// GET /v1/incidents: the kept incidents (domain/incident.go), read-only,
// for people with a role. Triage is the desk's.

type incidentJSON struct {
	ID             string     `json:"id"`
	Type           string     `json:"type"`
	Provider       string     `json:"provider"`
	ErrorClass     string     `json:"error_class" doc:"the items' error class; empty for items without an error"`
	ErrorCode      string     `json:"error_code"`
	Message        string     `json:"message" doc:"the latest item's error message"`
	Namespaces     []string   `json:"namespaces" schema:"required"`
	Status         string     `json:"status" schema:"enum=incident_statuses"`
	OpenItems      int        `json:"open_items" doc:"items on the desk now"`
	TotalItems     int        `json:"total_items" doc:"distinct items that ever joined it"`
	States         []string   `json:"states" schema:"required" doc:"the open items' states"`
	FirstSeen      time.Time  `json:"first_seen"`
	LastSeen       time.Time  `json:"last_seen"`
	AcknowledgedBy *string    `json:"acknowledged_by"`
	AcknowledgedAt *time.Time `json:"acknowledged_at"`
	Owner          *string    `json:"owner" doc:"the owner's identity (email, or subject); null for nobody"`
	DeskPath       string     `json:"desk_path"`
}

type incidentList struct {
	Items []incidentJSON `json:"items" schema:"required"`
}

func toIncident(in domain.Incident) incidentJSON {
	out := incidentJSON{ID: in.ID, Type: in.Type, Provider: in.Provider, ErrorClass: in.Error.Class, ErrorCode: in.Error.Code,
		Message: in.Message, Namespaces: append([]string{}, in.Namespaces...), Status: string(in.Status), OpenItems: in.OpenItems,
		TotalItems: in.TotalItems, States: []string{}, FirstSeen: in.FirstSeen.UTC(), LastSeen: in.LastSeen.UTC(),
		AcknowledgedBy: nullIfEmpty(in.AcknowledgedBy), AcknowledgedAt: utcOrNil(in.AcknowledgedAt), Owner: nullIfEmpty(in.Owner.Identity()),
		DeskPath: domain.IncidentPath(in.ID)}
	for _, s := range in.States() {
		out.States = append(out.States, s.String())
	}
	return out
}

func (s *server) listIncidents(c *gin.Context) {
	list, err := s.ledger.Incidents.DeskIncidents(c.Request.Context(), actorOf(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := incidentList{Items: make([]incidentJSON, 0, len(list))}
	for _, in := range list {
		out.Items = append(out.Items, toIncident(in))
	}
	s.render(c, http.StatusOK, out)
}
