package web

import (
	"net/http"
	"net/url"
	"testing"
)

// TestCSRF is the cross-origin matrix on the desk's cookie-authenticated
// POSTs: what a browser sends from the desk's own pages passes; what it
// sends on another site's behalf is refused before any handler runs.
func TestCSRF(t *testing.T) {
	r := newSignInRig(t, false, "https://desk.example.com")
	self := r.base
	cases := []struct {
		name    string
		headers []string
		allowed bool
	}{
		{"same-origin form post", []string{"Sec-Fetch-Site", "same-origin", "Origin", self}, true},
		{"typed or bookmarked (Sec-Fetch-Site none)", []string{"Sec-Fetch-Site", "none"}, true},
		{"old browser, Origin matches Host", []string{"Origin", self}, true},
		{"Origin is the public URL (proxy rewrote Host)", []string{"Origin", "https://desk.example.com"}, true},
		{"not a browser (no Sec-Fetch-Site, no Origin)", nil, true},
		{"cross-site", []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example.com"}, false},
		{"same-site subdomain", []string{"Sec-Fetch-Site", "same-site", "Origin", "https://other.desk.example.com"}, false},
		{"mismatched Origin, old browser", []string{"Origin", "https://evil.example.com"}, false},
		{"mismatched Origin, same scheme and host, other port", []string{"Origin", "http://127.0.0.1:1"}, false},
		{"Origin null (sandboxed or privacy-redirected)", []string{"Origin", "null"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := r.browser()
			if res := b.devSignIn("alice@example.com", "operator"); res.status != http.StatusSeeOther {
				t.Fatalf("sign-in: %d", res.status)
			}
			res := b.do("POST", "/test/whoami", url.Values{"x": {"1"}}, tc.headers...)
			if tc.allowed != (res.status == http.StatusOK) || (!tc.allowed && res.status != http.StatusForbidden) {
				t.Fatalf("desk POST: %d %q, want allowed=%v", res.status, res.body, tc.allowed)
			}
			// Sign-out is a desk POST too: a cross-site page must not be
			// able to end someone's session.
			out := b.do("POST", "/auth/logout", nil, tc.headers...)
			if tc.allowed != (out.status == http.StatusSeeOther) || (!tc.allowed && b.whoami() == "") {
				t.Fatalf("logout: %d, want allowed=%v", out.status, tc.allowed)
			}
			// A GET is never refused: it changes nothing.
			if get := r.browser().do("GET", "/auth/login", nil, tc.headers...); get.status != http.StatusOK {
				t.Fatalf("GET: %d", get.status)
			}
		})
	}
	t.Run("cross-site sign-in form post", func(t *testing.T) {
		b := r.browser()
		res := b.do("POST", "/auth/login", url.Values{"name": {"mallory"}, "role": {"admin"}},
			"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example.com")
		if res.status != http.StatusForbidden || b.session() != "" {
			t.Fatalf("login CSRF: %d", res.status)
		}
	})
}
