package web

import (
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/pages"
)

// approvalsPageSize keeps a page of diffs readable.
const approvalsPageSize = 20

// approvals lists the content versions awaiting a decision, each as a diff
// against the version before.
func (s *server) approvals(c *gin.Context) {
	person := me(c)
	items, next, err := s.ledger.Desk.PendingApprovals(c.Request.Context(), person, approvalsPageSize, c.Query("cursor"))
	if err != nil {
		s.fail(c, err)
		return
	}
	v := pages.ApprovalsView{Frame: s.frameFor(c, "Approvals", "approvals"), CanApprove: person.Role.AtLeast(domain.RoleApprover)}
	if next != "" {
		v.Next = "/desk/approvals?cursor=" + url.QueryEscape(next)
	}
	for _, p := range items {
		v.Items = append(v.Items, s.approvalItem(c, person, p))
	}
	page(c, http.StatusOK, pages.Approvals(v), pages.ApprovalsList(v))
}

// approvalItem is one content version awaiting a decision: who wrote it
// and why, its diff against the version before (none when the card hides
// the content from the viewer's role), and its twin.
func (s *server) approvalItem(c *gin.Context, person domain.Actor, p domain.PendingApproval) pages.ApprovalItem {
	it := pages.ApprovalItem{ID: p.Op.ID, Key: p.Op.Key, Type: p.Op.Type, Namespace: p.Op.Namespace,
		Author: p.Current.CreatedBy, Reason: p.Current.Reason, SHA256: p.Current.SHA256, Version: p.Op.Version,
		ContentVersion: p.Op.ContentVersion, CreatedAt: p.Current.CreatedAt,
		Own: p.Current.RevisedBy(person)}
	if it.CreatedAt.IsZero() {
		it.CreatedAt = p.Op.CreatedAt
	}
	if e := p.Op.LastError; e != nil && (e.Code == domain.CodeTwinUnresolved || e.Code == domain.CodeSupersedesSent) {
		// Approving runs it a second time on purpose: say which one first.
		it.Reason = e.Code + ": " + e.Message
	}
	var before []byte
	if p.Previous != nil {
		before = p.Previous.Content
	} else {
		it.First = true
	}
	it.Diff, it.DiffTruncated = boundedDiff(before, p.Current.Content)
	it.Download = snapshotURL(p.Op.ID, p.Current.Version)
	it.Hidden = components.ContentHiddenRunes(p.Current.Content)
	if p.Op.ContentHidden {
		card, _ := s.ledger.Cards.Get(p.Op.Type)
		it.HiddenFrom, it.Bytes, it.Diff, it.DiffTruncated, it.Hidden = card.ContentVisibleTo.String(), p.Op.ContentBytes, nil, false, nil
	}
	it.Twin = s.twinView(c.Request.Context(), person, p.Op)
	return it
}
