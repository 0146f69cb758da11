package web

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
)

// timeCookie keeps how a person reads the desk's times: utc, local or
// relative. It is a preference, not a secret.
const timeCookie = "handoff_time"

// timeMode is the person's choice of time display; UTC when none.
func timeMode(c *gin.Context) components.TimeMode {
	v, _ := c.Cookie(timeCookie)
	m, _ := components.ParseTimeMode(v)
	return m
}

// withTime puts the choice into the context the pages render with.
func withTime(c *gin.Context) context.Context {
	return components.WithTimeMode(c.Request.Context(), timeMode(c), time.Now())
}

// chooseTime keeps the person's choice and returns to the page they chose
// it on. An unknown choice changes nothing.
func (s *server) chooseTime(c *gin.Context) {
	m, ok := components.ParseTimeMode(c.PostForm("time"))
	if !ok {
		problem := domain.Invalid(domain.FieldError{Field: "time", Message: "must be utc, local or relative"})
		s.fail(c, problem)
		return
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: timeCookie, Value: string(m), Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: c.Request.TLS != nil, SameSite: http.SameSiteLaxMode})
	c.Redirect(http.StatusSeeOther, returnTo(c, "/desk"))
}
