package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// Saved views (domain/saved_view.go): the queue's, the Operations page's
// and the audit page's filter kept under a name, listed on the page, and
// opened as the page's URL with exactly that filter. The forms post and
// redirect, as every desk form, and need no JavaScript. Saving, renaming
// and deleting a view change no operation and are not audited; an admin's
// change of someone else's shared view is logged.

// viewPages are the list pages a view can be saved of, by their path.
var viewPages = map[string]string{"/desk/queue": "queue", domain.DeskOperations: "operations", "/desk/audit": "audit"}

// viewFilter reads a page's filter fields, those in use, from a query or
// a form.
func viewFilter(page string, get func(string) string) map[string]string {
	f := map[string]string{}
	for _, k := range domain.ViewFields[page] {
		if v := strings.TrimSpace(get(k)); v != "" {
			if k == "mine" {
				v = "1"
			}
			f[k] = v
		}
	}
	return f
}

// checkViewFilter refuses a filter its page could not read, as the page
// itself would: a view must open a list, not a refusal.
func checkViewFilter(page string, f map[string]string, person domain.Actor) error {
	get := func(k string) string { return f[k] }
	switch page {
	case "queue", "operations":
		qf := filterFrom(get, "assignee")
		if page == "operations" {
			st := qf.State
			qf.State = ""
			q, err := queueQuery(qf, person, "", time.Now())
			if err == nil {
				qf.State = st
				_, err = everyState(q, qf)
			}
			return err
		}
		_, err := queueQuery(qf, person, "", time.Now())
		return err
	case "audit":
		var errs []domain.FieldError
		_, errs = auditTime("from", f["from"], errs)
		_, errs = auditTime("to", f["to"], errs)
		if a := f["action"]; a != "" && !slices.Contains(auditActions, a) {
			errs = append(errs, domain.FieldError{Field: "action", Message: "is not an action the audit trail records"})
		}
		if len(errs) > 0 {
			return domain.Invalid(errs...)
		}
	}
	return nil
}

// viewURL is the page with exactly the view's filter.
func viewURL(v domain.SavedView) string {
	vals := url.Values{}
	for k, x := range v.Filter {
		vals.Set(k, x)
	}
	return strings.TrimSuffix(domain.ViewPagePath(v.Page)+"?"+vals.Encode(), "?")
}

// savedViews is the page's saved views for the person, with its filter
// now for the save form. A list that cannot be read leaves the page
// without it rather than failing the page.
func (s *server) savedViews(c *gin.Context, page string, filter map[string]string, self string) pages.SavedViews {
	person := me(c)
	out := pages.SavedViews{Page: page, Filter: filter, Return: self}
	if htmx(c) {
		return out // the results alone carry the save form, not the list
	}
	list, err := s.ledger.Views.SavedViews(c.Request.Context(), person, page)
	if err != nil {
		s.log.WarnContext(c.Request.Context(), "saved views not listed", "page", page, "err", err)
		return out
	}
	for _, v := range list {
		mine := v.OwnedBy(person)
		out.Rows = append(out.Rows, pages.SavedViewRow{ID: v.ID, Name: v.Name, URL: viewURL(v), Owner: v.Owner.Identity(),
			Shared: v.Shared, Mine: mine, CanChange: mine || (v.Shared && person.Role.AtLeast(domain.RoleAdmin))})
	}
	return out
}

// saveView keeps the posted filter of a page under the posted name, and
// opens the view.
func (s *server) saveView(c *gin.Context) {
	page := c.PostForm("page")
	f := viewFilter(page, c.PostForm)
	err := checkViewFilter(page, f, me(c))
	var v domain.SavedView
	if err == nil {
		v, err = s.ledger.Views.SaveView(c.Request.Context(), me(c), domain.SavedView{Page: page, Name: c.PostForm("name"),
			Filter: f, Shared: c.PostForm("shared") != ""})
	}
	if err != nil {
		s.viewRefused(c, err)
		return
	}
	c.Redirect(http.StatusSeeOther, viewURL(v))
}

// updateView renames a view and shares or unshares it.
func (s *server) updateView(c *gin.Context) {
	v, err := s.ledger.Views.UpdateView(c.Request.Context(), me(c), c.Param("id"), c.PostForm("name"), c.PostForm("shared") != "")
	if err != nil {
		s.viewRefused(c, err)
		return
	}
	s.logOthers(c, "renamed", v)
	c.Redirect(http.StatusSeeOther, returnTo(c, viewURL(v)))
}

// deleteView deletes a view.
func (s *server) deleteView(c *gin.Context) {
	v, err := s.ledger.Views.DeleteView(c.Request.Context(), me(c), c.Param("id"))
	if err != nil {
		s.viewRefused(c, err)
		return
	}
	s.logOthers(c, "deleted", v)
	c.Redirect(http.StatusSeeOther, returnTo(c, domain.ViewPagePath(v.Page)))
}

// logOthers logs an admin's change of someone else's shared view: the team
// loses or finds changed a view they used, and may ask who.
func (s *server) logOthers(c *gin.Context, what string, v domain.SavedView) {
	if p := me(c); !v.OwnedBy(p) {
		s.log.InfoContext(c.Request.Context(), "saved view "+what+" by an admin", "view", v.ID, "name", v.Name,
			"owner", v.Owner.Identity(), "by", p.Identity())
	}
}

// viewRefused shows why nothing was saved, with the way back.
func (s *server) viewRefused(c *gin.Context, err error) {
	v := pages.ViewRefusedView{Frame: s.frameFor(c, "Nothing was saved", ""), Message: s.problemLine(c, err),
		Back: returnTo(c, "/desk/queue")}
	page(c, statusOf(domain.ErrorCode(err)), pages.ViewRefused(v), pages.ViewRefused(v))
}
