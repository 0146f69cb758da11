package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// operationNotifications are the operation page's notifications; a failure
// to read them leaves the section empty rather than the page unreadable.
func (s *server) operationNotifications(c *gin.Context, id string) []pages.NotificationRow {
	ns, err := s.ledger.Outbox.Notifications(c.Request.Context(), me(c), id)
	if err != nil {
		return nil
	}
	admin := me(c).Role.AtLeast(domain.RoleAdmin)
	out := make([]pages.NotificationRow, len(ns))
	for i, n := range ns {
		out[i] = notificationRow(n, admin)
	}
	return out
}

func notificationRow(n domain.NotificationRecord, admin bool) pages.NotificationRow {
	r := pages.NotificationRow{ID: n.ID, OperationID: n.OperationID, Type: n.Type, URL: n.Destination.URL,
		Format: n.Destination.Format, Status: n.Status, LastError: n.LastError, CreatedAt: n.CreatedAt,
		DeliveredAt: n.DeliveredAt, CanResend: admin}
	if n.Status == domain.NotificationPending {
		next := n.NextAttemptAt
		r.NextAttemptAt = &next
	}
	for _, a := range n.History {
		row := pages.NotificationAttemptRow{Number: a.Number, At: a.At, Latency: a.Latency.Round(time.Millisecond).String(),
			Outcome: a.Outcome, Answer: a.Error}
		if a.StatusCode != 0 {
			row.StatusCode = "HTTP " + strconv.Itoa(a.StatusCode)
		}
		if row.Answer == "" {
			row.Answer = a.Response
		}
		r.Attempts = append(r.Attempts, row)
	}
	return r
}

// notifications is the admin page of destinations: failure rate, last
// error, and what was not delivered, with "send again".
func (s *server) notifications(c *gin.Context) {
	s.showNotifications(c, http.StatusOK, pages.Problem{}, c.Query("resent"))
}

func (s *server) showNotifications(c *gin.Context, status int, p pages.Problem, resent string) {
	ctx := c.Request.Context()
	dests, err := s.ledger.Outbox.NotificationDestinations(ctx, me(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	undelivered, err := s.ledger.Outbox.UndeliveredNotifications(ctx, me(c), 100)
	if err != nil {
		s.fail(c, err)
		return
	}
	v := pages.NotificationsView{Frame: s.frameFor(c, "Notifications", "notifications"), Problem: p, Resent: resent}
	for _, d := range dests {
		v.Destinations = append(v.Destinations, pages.DestinationRow{URL: d.URL, Format: d.Format,
			FailureRate: fmt.Sprintf("%.0f%%", 100*d.FailureRate()), LastError: d.LastError, LastErrorAt: d.LastErrorAt,
			Notifications: d.Notifications, Delivered: d.Delivered, Failed: d.Failed, Pending: d.Pending, AttemptsN: d.Attempts,
			Unsigned: s.ledger.Cards.SendsUnsigned(d.URL), Kinds: kindsText(s.ledger.Cards.KindsOf(d.URL))})
	}
	for _, card := range s.ledger.Cards.Sorted() {
		for _, d := range card.AllDestinations() {
			if d.Unsigned {
				v.Unsigned = append(v.Unsigned, d.URL+" ("+card.Name+")")
			}
		}
	}
	for _, n := range undelivered {
		v.Undelivered = append(v.Undelivered, notificationRow(n, true))
	}
	page(c, status, pages.Notifications(v), pages.NotificationsBody(v))
}

// resendNotification sends a notification again with its id; the Ledger
// records who asked and why in the audit trail.
func (s *server) resendNotification(c *gin.Context) {
	ctx := domain.WithRequestInfo(c.Request.Context(), s.ledger.IDs.New("req"), c.ClientIP())
	n, err := s.ledger.Outbox.ResendNotification(ctx, me(c), c.Param("id"), c.PostForm("reason"))
	if err != nil {
		e := domain.AsError(err)
		if e.Code == domain.EForbidden || e.Code == domain.ENotFound {
			s.fail(c, err)
			return
		}
		p := pages.Problem{Message: s.message(c, err)}
		for _, f := range e.Fields {
			p.Fields = append(p.Fields, f.Field+": "+f.Message)
		}
		s.showNotifications(c, statusOf(e.Code), p, "")
		return
	}
	c.Redirect(http.StatusSeeOther, "/desk/notifications?resent="+n.ID)
}

// kindsText lists kinds of notification as a person reads them.
func kindsText(kinds []string) string {
	if slices.Contains(kinds, "*") {
		return "every kind"
	}
	return strings.Join(kinds, ", ")
}

// addNotify explains a card's notify list and escalation on the Types page.
func addNotify(c domain.Card, add func(name, value, meaning string, warn bool)) {
	dests := func(ds []domain.Destination) string {
		parts := make([]string, len(ds))
		for i, d := range ds {
			parts[i] = d.URL + " (" + d.Format + "; " + kindsText(d.Kinds()) + ")"
		}
		return strings.Join(parts, ", ")
	}
	if len(c.Notify) > 0 {
		add("notify", dests(c.Notify), "Who is told when an item enters the desk or approval, and when a person resolves it.", false)
	}
	if c.NotifyURL == "" && len(c.Notify) == 0 {
		add("notify", "nobody", "Nobody is told when an item of this type waits on a person.", true)
	}
	if c.EscalateAfter > 0 {
		to := dests(c.Escalate)
		if to == "" {
			to = "the notify destinations"
		}
		add("escalate_after", duration(c.EscalateAfter)+" → "+to,
			"An item still unassigned and unresolved this long after it entered the desk is escalated.", false)
	}
}
