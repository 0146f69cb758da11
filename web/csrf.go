package web

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/gin-gonic/gin"
)

// crossOriginGuard refuses state-changing requests that a browser sent on
// behalf of another site — cross-site, same-site (a sibling subdomain) or a
// foreign Origin — with Go's http.CrossOriginProtection: it reads
// Sec-Fetch-Site, and falls back to comparing Origin with Host for older
// browsers. The desk's forms carry no token: the browser's own headers say
// where a request came from, and the session cookie is SameSite=Lax too.
//
// The public URL's origin is trusted as our own: behind a proxy that
// rewrites Host, Origin still names the public URL.
func crossOriginGuard(publicURL string) (gin.HandlerFunc, error) {
	p := http.NewCrossOriginProtection()
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("web: public URL %q is not an http(s) URL", publicURL)
		}
		if err := p.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
			return nil, fmt.Errorf("web: public URL %q: %w", publicURL, err)
		}
	}
	return func(c *gin.Context) {
		if err := p.Check(c.Request); err != nil {
			c.String(http.StatusForbidden, "Refused: this request came from another site.")
			c.Abort()
			return
		}
		c.Next()
	}, nil
}
