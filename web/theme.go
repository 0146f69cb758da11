package web

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// themeCookie keeps a person's colour theme: light or dark; without it the
// desk follows the system's preference (prefers-color-scheme).
const themeCookie = "handoff_theme"

// theme is the person's choice of colour theme; "" when none.
func theme(c *gin.Context) string {
	v, _ := c.Cookie(themeCookie)
	if v == "light" || v == "dark" {
		return v
	}
	return ""
}

// chooseTheme keeps the person's choice — "auto" forgets it — and returns
// to the page they chose it on. An unknown choice changes nothing.
func (s *server) chooseTheme(c *gin.Context) {
	th := c.PostForm("theme")
	if th != "auto" && th != "light" && th != "dark" {
		s.fail(c, domain.Invalid(domain.FieldError{Field: "theme", Message: "must be auto, light or dark"}))
		return
	}
	cookie := &http.Cookie{Name: themeCookie, Value: th, Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, Secure: c.Request.TLS != nil, SameSite: http.SameSiteLaxMode}
	if th == "auto" {
		cookie.Value, cookie.MaxAge = "", -1
	}
	http.SetCookie(c.Writer, cookie)
	c.Redirect(http.StatusSeeOther, returnTo(c, "/desk"))
}
