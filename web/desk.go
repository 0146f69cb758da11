package web

import (
	"net/http"
	"strings"

	"github.com/a-h/templ"
	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// deskRoutes registers the desk's pages. Every page needs a signed-in
// person; the decisions themselves are checked again by the Ledger (role,
// four eyes, version), so hiding a button is a courtesy, never the guard.
func (s *server) deskRoutes(e *gin.Engine) {
	// session.go: sends whoever is not signed in to sign in, after
	// flash.go kept a decision they posted.
	g := e.Group("/desk", limitBody, s.keepExpiredDecision, requirePerson) // body.go: before any form is read
	g.GET("", s.overview)
	g.GET("/queue", s.queue)
	g.GET("/operations/:id", s.operation)
	g.GET("/operations/:id/content/:file", s.snapshot) // :file is VERSION.json
	g.POST("/operations/:id/resolve", s.resolve)
	g.POST("/operations/:id/assign", s.assign)
	g.POST("/operations/:id/notes", s.note)
	g.POST("/operations/:id/contradiction", s.contradict) // contradiction.go
	g.POST("/operations/:id/lookup", s.lookupNow)
	g.POST("/operations/:id/revisions", s.revise)
	g.POST("/operations/:id/approve", s.approve)
	g.POST("/operations/:id/reject", s.reject)
	g.GET("/approvals", s.approvals)
	g.GET("/audit", s.audit)
	g.GET("/audit/export", s.auditExport)
	g.GET("/types", s.types)
	g.GET("/notifications", s.notifications)                  // notifications.go
	g.POST("/notifications/:id/resend", s.resendNotification) // notifications.go
	g.GET("/drills/:id", s.drillReceipt)
	g.GET("/incidents", s.incidents) // incidents.go
	g.GET("/incidents/:id", s.incident)
	g.POST("/incidents/:id/:action", s.triage)
	g.GET("/operations", s.operations)
	g.POST("/batch/preview", s.batchPreview)
	g.POST("/batch", s.batchApply)
	g.GET("/batch/:id", s.batchResult)  // batch_result.go
	g.POST("/time", s.chooseTime)       // time.go
	g.POST("/density", s.chooseDensity) // density.go
	g.POST("/theme", s.chooseTheme)     // theme.go
	g.POST("/views", s.saveView)        // saved_views.go
	g.POST("/views/:id", s.updateView)
	g.POST("/views/:id/delete", s.deleteView)
}

// me is the signed-in person; requirePerson guarantees there is one.
func me(c *gin.Context) domain.Actor {
	p, _ := personOf(c)
	return p
}

// htmx reports whether the request came from htmx and wants a fragment. A
// history restore asks for the whole page.
func htmx(c *gin.Context) bool {
	return c.GetHeader("HX-Request") == "true" && c.GetHeader("HX-History-Restore-Request") != "true"
}

// page renders the whole page, or only its fragment for htmx. Vary keeps a
// cache from answering one with the other.
func page(c *gin.Context, status int, full, fragment templ.Component) {
	c.Header("Vary", "HX-Request")
	c.Header("Cache-Control", "no-store")
	if status == http.StatusServiceUnavailable {
		c.Header("Retry-After", "2")
	}
	if htmx(c) {
		render(c, status, fragment)
		return
	}
	render(c, status, full)
}

// statusOf is the status of a desk page that shows an error: the table
// shared with the API (domain.HTTPStatus), with one departure — a refused
// form (a field the person must correct) answers 422, the page re-rendered
// with the refusal, where the API answers 400.
func statusOf(code domain.Code) int {
	if code == domain.EInvalid || code == domain.EInvalidJSON {
		return http.StatusUnprocessableEntity
	}
	return domain.HTTPStatus(code)
}

// message is what a person may read about err: internal errors are logged,
// never shown.
func (s *server) message(c *gin.Context, err error) string {
	e := domain.AsError(err)
	if e.Code == domain.EInternal {
		s.log.Error("desk", "path", c.Request.URL.Path, "err", err)
		return "Something went wrong on our side; it has been logged. Try again."
	}
	return e.Message
}

// fail renders a page that could not be shown.
func (s *server) fail(c *gin.Context, err error) {
	code := domain.ErrorCode(err)
	title := map[domain.Code]string{domain.ENotFound: "Not found", domain.EForbidden: "Not allowed",
		domain.EUnavailable: "The database is unavailable"}[code]
	if title == "" {
		title = "Something went wrong"
	}
	v := pages.ProblemView{Frame: s.frameFor(c, title, ""), Title: title, Message: s.message(c, err)}
	page(c, statusOf(code), pages.ProblemPage(v), pages.ProblemBody(v))
}

// returnTo is a form's "return" field when it names a desk page, so a form
// cannot redirect anywhere else.
func returnTo(c *gin.Context, fallback string) string {
	r := c.PostForm("return")
	if strings.HasPrefix(r, "/desk") && !strings.HasPrefix(r, "//") && !strings.Contains(r, `\`) {
		return r
	}
	return fallback
}
