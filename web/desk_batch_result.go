package web

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// An applied batch answers 303 to its result page, so a reload shows the
// result again and never applies the batch twice. The result is kept in
// this process's memory, for the person who applied it, for a while: each
// item's decision is in its own timeline and the audit log for good (with
// the batch's ID), so the page is a receipt, not a record. Behind a load
// balancer without sticky sessions the result page may be asked of another
// replica; it then says where to find the decisions instead.

// batchKeep is how long a batch's result page stays readable.
const batchKeep = time.Hour

// batchKept bounds the results held, so memory stays flat.
const batchKept = 200

type keptBatch struct {
	owner string
	at    time.Time
	view  pages.BatchView
}

// batchResults holds the recent batches' results; the zero value is ready.
type batchResults struct {
	mu    sync.Mutex
	byID  map[string]keptBatch
	order []string // oldest first
}

func (b *batchResults) put(id, owner string, v pages.BatchView, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byID == nil {
		b.byID = map[string]keptBatch{}
	}
	for len(b.order) > 0 && (len(b.order) >= batchKept || now.Sub(b.byID[b.order[0]].at) > batchKeep) {
		delete(b.byID, b.order[0])
		b.order = b.order[1:]
	}
	b.byID[id] = keptBatch{owner: owner, at: now, view: v}
	b.order = append(b.order, id)
}

func (b *batchResults) get(id, owner string, now time.Time) (pages.BatchView, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.byID[id]
	if !ok || !strings.EqualFold(k.owner, owner) || now.Sub(k.at) > batchKeep {
		return pages.BatchView{}, false
	}
	return k.view, true
}

// batchResult shows an applied batch's result to the person who applied it.
func (s *server) batchResult(c *gin.Context) {
	v, ok := s.batches.get(c.Param("id"), me(c).Identity(), time.Now())
	if !ok {
		s.fail(c, domain.Errorf(domain.ENotFound, "the result of batch %s is not kept here (results are kept for an hour, "+
			"for the person who applied the batch); each item's decision is in its timeline and in the audit log, "+
			"with batch_id %s", c.Param("id"), c.Param("id")))
		return
	}
	v.Frame = s.frameFor(c, "Done", "queue")
	page(c, http.StatusOK, pages.Batch(v), pages.Batch(v))
}
