package web

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/layouts"
)

// deskCounts is the navigation's count of the desk's items; nil when it
// cannot be read, so a page still shows without it.
func (s *server) deskCounts(c *gin.Context) *layouts.DeskCounts {
	p, ok := personOf(c)
	if !ok || s.ledger == nil {
		return nil
	}
	n, err := s.ledger.Desk.DeskCounts(c.Request.Context(), p)
	if err != nil {
		return nil
	}
	return &layouts.DeskCounts{Unknown: n[domain.UnknownOutcome], Failed: n[domain.FailedTerminal]}
}

// navOf is the navigation entry of the list an item was opened from: an
// item belongs to no list of its own, so without one nothing is marked.
func navOf(from string) string {
	for _, nav := range []string{"queue", "incidents", "operations", "approvals", "audit"} {
		if strings.HasPrefix(from, "/desk/"+nav) {
			return nav
		}
	}
	return ""
}
