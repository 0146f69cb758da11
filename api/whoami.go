package api

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

// whoamiJSON is the caller as the server authenticated it: a client checks
// its credential (and a workflow token's namespace) before it acts.
type whoamiJSON struct {
	Kind      string `json:"kind" schema:"required,enum=actor_kinds"`
	Name      string `json:"name" schema:"required"`
	Namespace string `json:"namespace,omitempty" doc:"a workflow token's one namespace"`
	Role      string `json:"role,omitempty" doc:"a person's role"`
	Issuer    string `json:"issuer,omitempty"`
	Subject   string `json:"subject,omitempty"`
}

func (s *server) whoami(c *gin.Context) {
	a := actorOf(c)
	out := whoamiJSON{Kind: a.Kind.String(), Name: a.Name, Namespace: a.Namespace, Issuer: a.Issuer, Subject: a.Subject}
	if a.Role.String() != "" && a.Namespace == "" {
		out.Role = a.Role.String()
	}
	s.render(c, http.StatusOK, out)
}
