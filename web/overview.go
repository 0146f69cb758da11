package web

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// overview shows the desk at a glance.
func (s *server) overview(c *gin.Context) {
	sum, err := s.ledger.DeskSummary(c.Request.Context(), me(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	v := overviewView(sum)
	v.Recovery = s.recoveryView(c) // notifications.go
	v.Frame = s.frameFor(c, "Overview", "overview")
	page(c, http.StatusOK, pages.Overview(v), pages.OverviewBody(v))
}

func overviewView(sum domain.DeskSummary) pages.OverviewView {
	v := pages.OverviewView{Now: sum.Now, Entered: sum.Entered, PerHour: sum.PerHour}
	for _, st := range domain.States {
		sc := pages.StateCount{State: st.String(), N: sum.ByState[st], InDesk: st.InDesk()}
		switch {
		case st.InDesk():
			sc.Link = "/desk/queue?state=" + st.String()
			v.InDesk += sc.N
		case st == domain.AwaitingApproval:
			sc.Link = "/desk/approvals"
		}
		v.States = append(v.States, sc)
	}
	// Each band links to the queue of items at least as old as the band's
	// lower bound.
	var lower string
	for i, b := range domain.DeskAgeBands {
		link := "/desk/queue"
		if lower != "" {
			link += "?age=" + url.QueryEscape(lower)
		}
		n := 0
		if i < len(sum.AgeBands) {
			n = sum.AgeBands[i]
		}
		v.Bands = append(v.Bands, pages.BandCount{Label: b.Label, N: n, Link: link})
		lower = ageParam(b.Under)
	}
	for _, e := range sum.Latest {
		v.Latest = append(v.Latest, pages.EntryRow{ID: e.OperationID, Key: e.Key, Type: e.Type, State: e.State.String(), At: e.At})
	}
	if sum.Oldest != nil {
		r := queueRow(*sum.Oldest, domain.Card{}, sum.Now, nil)
		v.Oldest = &r
	}
	return v
}
