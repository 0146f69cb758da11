package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The theme is a person's, kept in a cookie and said on the page's root
// element; "auto" forgets it, and anything else changes nothing.
func TestDesk_ThemeKeptInACookie(t *testing.T) {
	d := newDesk(t)
	r := d.post("ada", "/desk/theme", url.Values{"theme": {"dark"}, "return": {"/desk/audit"}}).want(http.StatusSeeOther)
	if r.header.Get("Location") != "/desk/audit" || r.cookie(themeCookie) != "dark" {
		t.Fatalf("choosing dark: to %q, cookie %q", r.header.Get("Location"), r.cookie(themeCookie))
	}
	p := d.get("ada", "/desk/audit", "Cookie", themeCookie+"=dark").want(http.StatusOK)
	if html := p.doc.FirstChild.NextSibling; html == nil || attr(html, "data-theme") != "dark" {
		t.Fatal("the page does not say the theme is dark")
	}
	if attr(p.one("theme-dark"), "aria-pressed") != "true" || attr(p.one("theme-auto"), "aria-pressed") != "false" {
		t.Fatal("the chosen theme is not shown as chosen")
	}
	r = d.post("ada", "/desk/theme", url.Values{"theme": {"auto"}}).want(http.StatusSeeOther)
	if !strings.Contains(r.header.Get("Set-Cookie"), themeCookie+"=;") || !strings.Contains(r.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("auto does not forget the choice: %q", r.header.Get("Set-Cookie"))
	}
	p = d.get("ada", "/desk/audit", "Cookie", themeCookie+"=purple").want(http.StatusOK)
	if html := p.doc.FirstChild.NextSibling; attr(html, "data-theme") != "" || attr(p.one("theme-auto"), "aria-pressed") != "true" {
		t.Fatal("an unknown theme is not auto")
	}
	if bad := d.post("ada", "/desk/theme", url.Values{"theme": {"purple"}}); bad.status != http.StatusUnprocessableEntity || bad.cookie(themeCookie) != "" {
		t.Fatalf("bad choice: %d, cookie %q", bad.status, bad.cookie(themeCookie))
	}
}

// The audit filter's From and To are read in the browser's zone when
// times show in it and desk.js said which zone that is; in UTC otherwise.
func TestDesk_AuditFilterZone(t *testing.T) {
	d := newDesk(t)
	for _, c := range []struct{ cookie, label string }{
		{"", "UTC"}, {zoneCookie + "=330", "UTC"}, {timeCookie + "=local", "UTC"},
		{timeCookie + "=local; " + zoneCookie + "=330", "local"}, {timeCookie + "=local; " + zoneCookie + "=9999", "UTC"},
		{timeCookie + "=relative; " + zoneCookie + "=330", "UTC"},
	} {
		p := d.get("ada", "/desk/audit?from=2026-01-31T14:00", "Cookie", c.cookie).want(http.StatusOK)
		if got := text(p.one("audit-from-label")); got != "From ("+c.label+")" {
			t.Errorf("cookies %q: %q", c.cookie, got)
		}
	}
}
