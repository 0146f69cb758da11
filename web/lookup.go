package web

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/pages"
)

// lookupNow runs the card's lookup adapter for the person and comes back to
// the operation, where the answer is shown beside the decision. It is
// recorded as a lookup; the person still decides.
func (s *server) lookupNow(c *gin.Context) {
	s.decide(c, nil, func(ctx context.Context) error {
		_, err := s.ledger.Desk.LookUpNow(ctx, me(c), c.Param("id"))
		return err
	})
}

// lookupActions are the audit actions whose detail carries a lookup's tries.
var lookupActions = []string{domain.ActionLookedUp, domain.ActionLookupNotFound, domain.ActionLookupInconclusive, domain.ActionLookupRun}

// lookupPanel is the latest lookup in the timeline, for the page's panel.
func lookupPanel(it domain.DeskItem, person domain.Actor) pages.LookupPanel {
	p := pages.LookupPanel{Adapter: it.Card.LookupAdapter != nil}
	p.CanRun = p.Adapter && person.Role.AtLeast(domain.RoleOperator)
	p.Pending = domain.AwaitingLookup(it.Op, it.Card)
	for i := len(it.Timeline) - 1; i >= 0; i-- {
		e := it.Timeline[i]
		if !slices.Contains(lookupActions, e.Action) {
			continue
		}
		var d struct {
			Evidence  string `json:"evidence"`
			ResultRef string `json:"result_ref"`
			Result    string `json:"result"`
			Tries     []struct {
				At, Method, URL, Summary string
			} `json:"tries"`
		}
		_ = json.Unmarshal(e.Detail, &d)
		p.Adapter = true
		p.Evidence, p.At, p.By = d.Evidence, e.At, eventRow(e).Actor
		for _, t := range d.Tries {
			at, _ := time.Parse(time.RFC3339Nano, t.At)
			p.Tries = append(p.Tries, pages.LookupTryRow{At: components.UTCText(at), Request: t.Method + " " + t.URL, Summary: t.Summary})
		}
		if e.Action == domain.ActionLookedUp || d.Result == domain.LookupFoundDone.String() {
			p.FoundRef = d.ResultRef
		}
		break
	}
	p.Tries = groupTries(p.Tries) // lookup_repeats.go
	if p.FoundRef == "" && p.Evidence != "" {
		p.Repeats, p.Since = lookupRepeats(it.Timeline)
	}
	return p
}
