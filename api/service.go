package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

type statusJSON struct {
	Status string `json:"status" schema:"required"`
}

// openAPIObject stands for the OpenAPI document in the document itself.
type openAPIObject map[string]any

func (s *server) healthz(c *gin.Context) { s.render(c, http.StatusOK, statusJSON{Status: "ok"}) }

// readyTimeout bounds the readiness probe: a probe that hangs is a failure.
const readyTimeout = 2 * time.Second

func (s *server) readyz(c *gin.Context) {
	if s.ready != nil {
		ctx, cancel := context.WithTimeout(c.Request.Context(), readyTimeout)
		defer cancel()
		if err := s.ready(ctx); err != nil {
			if domain.ErrorCode(err) != domain.EUnavailable {
				err = domain.Wrap(domain.EUnavailable, err, "not ready")
			}
			s.fail(c, err)
			return
		}
	}
	s.render(c, http.StatusOK, statusJSON{Status: "ready"})
}

func (s *server) metrics(c *gin.Context) { s.metricsHandler.ServeHTTP(c.Writer, c.Request) }

func (s *server) openapi(c *gin.Context) {
	c.Data(http.StatusOK, "application/json; charset=utf-8", s.openapiDoc)
}
