package web

import (
	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
)

// summaryFields are a card's summary fields as the views show them.
func summaryFields(fs []domain.SummaryField) []components.SummaryField {
	var out []components.SummaryField
	for _, f := range fs {
		out = append(out, components.SummaryField{Name: f.Name, Value: f.Value})
	}
	return out
}

// summaries reads the summary fields of the operations ids for the
// viewer; a failure leaves the lists without them (logged), never the page
// without its list.
func (s *server) summaries(c *gin.Context, ids []string) map[string][]components.SummaryField {
	got, err := s.ledger.Desk.Summaries(c.Request.Context(), me(c), ids)
	if err != nil {
		s.log.WarnContext(c.Request.Context(), "reading summary fields", "err", err)
		return nil
	}
	out := map[string][]components.SummaryField{}
	for id, fs := range got {
		out[id] = summaryFields(fs)
	}
	return out
}
