package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/views/pages"
)

// An applied batch answers 303 to its result page, so a reload shows the
// result again and never applies the batch twice. The result is kept in the
// database (domain.BatchKeeper), so any replica shows it, and the person who
// applied it can send the link to a colleague; each item's decision is also
// in its own timeline and the audit log, with the batch's ID.

// batchResult shows an applied batch's result.
func (s *server) batchResult(c *gin.Context) {
	rec, err := s.ledger.Bulk.KeptBatch(c.Request.Context(), me(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	v := pages.BatchView{Frame: s.frameFor(c, "Done", "queue"), Decision: batchWords(rec.Batch),
		By: rec.By.Identity(), At: rec.At, Reason: rec.Batch.Reason, Back: "/desk/queue"}
	fillBatch(&v, rec.Batch, rec.Result)
	s.withSummaries(c, &v)
	page(c, http.StatusOK, pages.Batch(v), pages.Batch(v))
}
