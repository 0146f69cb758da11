package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// densityCookie keeps how tightly a person wants tables set: compact or
// comfortable; without it, tables are compact on a wide screen only.
const densityCookie = "handoff_density"

// density is the person's choice of table density; "" when none.
func density(c *gin.Context) string {
	v, _ := c.Cookie(densityCookie)
	if v == "compact" || v == "comfortable" {
		return v
	}
	return ""
}

// chooseDensity keeps the person's choice and returns to the page they
// chose it on. An unknown choice changes nothing.
func (s *server) chooseDensity(c *gin.Context) {
	d := c.PostForm("density")
	if d != "compact" && d != "comfortable" {
		s.fail(c, domain.Invalid(domain.FieldError{Field: "density", Message: "must be compact or comfortable"}))
		return
	}
	http.SetCookie(c.Writer, &http.Cookie{Name: densityCookie, Value: d, Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: c.Request.TLS != nil, SameSite: http.SameSiteLaxMode})
	c.Redirect(http.StatusSeeOther, returnTo(c, "/desk"))
}
