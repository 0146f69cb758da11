package web

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// Incidents: the kept incidents (domain/incident.go), one incident's page
// and its triage forms (domain/incident_triage.go). Operators and above
// triage; a viewer reads. No page shows an item's content.

func (s *server) incidents(c *gin.Context) {
	person := me(c)
	list, err := s.ledger.Incidents.DeskIncidents(c.Request.Context(), person)
	if err != nil {
		s.fail(c, err)
		return
	}
	v := pages.IncidentsView{Frame: s.frameFor(c, "Incidents", "incidents"), CanAct: person.Role.AtLeast(domain.RoleOperator)}
	for _, in := range list {
		v.Incidents = append(v.Incidents, incidentRow(in))
		if v.CanAct && in.OpenItems > 0 && v.People == nil {
			v.People = s.assignable(c) // once, for every bulk form's assignee
		}
	}
	page(c, http.StatusOK, pages.Incidents(v), pages.Incidents(v))
}

// incidentRow is an incident as the list and its page show it.
func incidentRow(in domain.Incident) pages.IncidentRow {
	f := pages.QueueFilter{Type: in.Type, Error: in.Error.String()}
	if f.Error == "" {
		f.Error = ":" // items with no error: class and code both empty
	}
	states := make([]string, len(in.States()))
	for i, st := range in.States() {
		states[i] = st.String()
	}
	return pages.IncidentRow{ID: in.ID, URL: pages.IncidentURL(in.ID), Provider: in.Provider, Type: in.Type,
		Error: orDefault(in.Error.String(), "no error"), Message: in.Message, Status: string(in.Status), Active: in.Status.Active(),
		Owner: in.Owner.Identity(), OpenItems: in.OpenItems, TotalItems: in.TotalItems, Twins: in.Twins,
		States: strings.Join(states, ", "), Namespaces: strings.Join(in.Namespaces, ", "),
		FirstSeen: in.FirstSeen, LastSeen: in.LastSeen, ItemsURL: queueURL(f, ""), Filter: f}
}

// incidentDone is the status line after each triage action.
var incidentDone = map[string]string{
	"acknowledge": "Acknowledged.", "owner": "Owner set.", "notes": "Note added.",
	"resolve": "Resolved.", "ignore": "Ignored.", "reopen": "Reopened.",
}

// incidentWords says each timeline action.
var incidentWords = map[string]string{
	domain.IncidentActionOpened: "opened it", domain.IncidentActionReopened: "reopened it",
	domain.IncidentActionAcknowledged: "acknowledged it", domain.IncidentActionOwner: "set the owner",
	domain.IncidentActionNote: "wrote a note", domain.IncidentActionResolved: "resolved it",
	domain.IncidentActionIgnored: "ignored it",
}

func (s *server) incident(c *gin.Context) {
	s.showIncident(c, http.StatusOK, incidentDone[c.Query("done")], "", pages.IncidentDraft{})
}

// showIncident renders the incident's page, with a refusal and the
// refused form's text when there is one.
func (s *server) showIncident(c *gin.Context, status int, done, problem string, draft pages.IncidentDraft) {
	person := me(c)
	in, items, events, err := s.ledger.Incidents.DeskIncident(c.Request.Context(), person, c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	title := "Incident: " + in.Type + " " + orDefault(in.Error.String(), "no error")
	v := pages.IncidentView{Frame: s.frameFor(c, title, "incidents"), In: incidentRow(in), AckBy: in.AcknowledgedBy, AckAt: in.AcknowledgedAt,
		By: in.StatusBy, At: in.StatusAt, Version: in.Version, CanAct: person.Role.AtLeast(domain.RoleOperator),
		Done: done, Problem: problem, Draft: draft}
	s.incidentItems(c, &v, items)
	for _, e := range events {
		v.Events = append(v.Events, pages.IncidentEventRow{At: e.At, Actor: e.Actor, What: orDefault(incidentWords[e.Action], e.Action) + detailWords(e),
			Text: e.Text, Audited: e.AuditID != ""})
	}
	if v.CanAct {
		s.incidentOwners(c, &v, in.Owner)
	}
	page(c, status, pages.Incident(v), pages.Incident(v))
}

// incidentItems are the incident's operations with their summaries, and
// the open ones still on the desk, each at the version shown.
func (s *server) incidentItems(c *gin.Context, v *pages.IncidentView, items []domain.IncidentItem) {
	for _, it := range items {
		v.Items = append(v.Items, pages.IncidentItemRow{ID: it.OperationID, Key: it.Key, Namespace: it.Namespace, State: it.State.String(),
			Error: orDefault(it.Error.String(), "no error"), Message: it.Message, EnteredAt: it.EnteredAt, Open: it.Open, Twin: it.Twin})
		if it.Open && it.State.InDesk() {
			v.Open = append(v.Open, it.OperationID+":"+strconv.FormatInt(it.Version, 10))
		}
	}
	ids := make([]string, len(v.Items))
	for i, it := range v.Items {
		ids[i] = it.ID
	}
	sums := s.summaries(c, ids)
	for i := range v.Items {
		v.Items[i].Summary = sums[v.Items[i].ID]
	}
}

// incidentOwners are the people the owner field offers, the current owner
// among them even when the list left them out.
func (s *server) incidentOwners(c *gin.Context, v *pages.IncidentView, owner domain.Person) {
	person := me(c)
	ps, err := s.ledger.Desk.People(c.Request.Context(), person, domain.PeopleQuery{Roles: domain.Deciders, Limit: domain.MaxPeople})
	if err != nil {
		s.log.Warn("listing the people who may own an incident", "err", err)
	}
	v.People = peopleOptions(ps, person, domain.Operation{})
	if owner != (domain.Person{}) {
		v.OwnerVal = personValue(owner)
		if !hasOption(v.People, v.OwnerVal) {
			v.People = append(v.People, pages.PersonOption{Value: v.OwnerVal, Label: owner.Identity() + " (owner now)"})
		}
	}
}

func detailWords(e domain.IncidentEvent) string {
	if e.Action == domain.IncidentActionOwner && e.Detail != "" {
		return " to " + e.Detail
	}
	return ""
}

func hasOption(opts []pages.PersonOption, value string) bool {
	for _, o := range opts {
		if o.Value == value {
			return true
		}
	}
	return false
}

// openItemsUnconfirmed refuses to resolve an incident whose items are
// still open unless the person confirmed it: resolving decides none of
// them, and an incident marked resolved is easily taken for a finished
// outage.
func (s *server) openItemsUnconfirmed(c *gin.Context) error {
	in, _, _, err := s.ledger.Incidents.DeskIncident(c.Request.Context(), me(c), c.Param("id"))
	if err != nil || in.OpenItems == 0 {
		return err
	}
	return domain.Invalid(domain.FieldError{Field: "confirm_open", Message: fmt.Sprintf(
		"%d items are still open: confirm that you resolve the incident without deciding them", in.OpenItems)})
}

// triageKinds are the triage forms' paths.
var triageKinds = map[string]domain.TriageKind{
	"acknowledge": domain.TriageAcknowledge, "owner": domain.TriageOwner, "notes": domain.TriageNote,
	"resolve": domain.TriageResolve, "ignore": domain.TriageIgnore, "reopen": domain.TriageReopen,
}

// readTriage reads the rest of the triage form into t: the version the
// person saw, the owner chosen, and for a resolve with open items the
// confirmation.
func (s *server) readTriage(ctx context.Context, c *gin.Context, t *domain.Triage) error {
	var err error
	if v := c.PostForm("expected_version"); v != "" {
		if t.ExpectedVersion, err = strconv.ParseInt(v, 10, 64); err != nil || t.ExpectedVersion < 1 {
			err = domain.Invalid(domain.FieldError{Field: "expected_version", Message: "must be a positive integer"})
		}
	}
	if err == nil && t.Kind == domain.TriageOwner {
		t.Owner, err = s.personFrom(ctx, me(c), strings.TrimSpace(c.PostForm("owner")))
	}
	if err == nil && t.Kind == domain.TriageResolve && c.PostForm("confirm_open") == "" {
		err = s.openItemsUnconfirmed(c)
	}
	return err
}

// triage takes one triage action, then shows the incident again (303).
func (s *server) triage(c *gin.Context) {
	action := c.Param("action")
	kind, ok := triageKinds[action]
	if !ok {
		s.fail(c, domain.Errorf(domain.ENotFound, "no such page"))
		return
	}
	t := domain.Triage{Kind: kind, Text: c.PostForm("text")}
	draft := pages.IncidentDraft{Form: action, Text: t.Text}
	ctx := domain.WithRequestInfo(c.Request.Context(), s.ledger.IDs.New("req"), c.ClientIP())
	err := s.readTriage(ctx, c, &t)
	if err == nil {
		_, err = s.ledger.Incidents.TriageIncident(ctx, me(c), c.Param("id"), t)
	}
	if err != nil {
		if domain.ErrorCode(err) == domain.ENotFound {
			s.fail(c, err)
			return
		}
		s.showIncident(c, statusOf(domain.ErrorCode(err)), "", s.problemLine(c, err), draft)
		return
	}
	c.Redirect(http.StatusSeeOther, pages.IncidentURL(c.Param("id"))+"?done="+action)
}
