package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestSession_lifecycle: with the sessions' clock faked, the idle timeout,
// the absolute timeout and sign-out each make the cookie worthless, and
// every sign-in gets a new session.
func TestSession_lifecycle(t *testing.T) {
	t.Run("new session at sign-in", func(t *testing.T) {
		r := newSignInRig(t, false, "")
		b := r.browser()
		if res := b.devSignIn("alice@example.com", "operator"); res.status != http.StatusSeeOther || res.header.Get("Location") != "/test/whoami" {
			t.Fatalf("sign-in: %d %s", res.status, res.body)
		}
		first := b.session()
		if b.devSignIn("bob@example.com", "approver"); b.session() == first || first == "" {
			t.Fatal("signing in again kept the session ID")
		}
		if who := b.whoami(); who != "bob@example.com approver" {
			t.Fatalf("whoami = %q", who)
		}
		old := r.browser()
		old.setCookie("handoff_session", first)
		if who := old.whoami(); who != "" {
			t.Fatalf("the session replaced at sign-in still works: %q", who)
		}
	})
	t.Run("idle timeout", func(t *testing.T) {
		r := newSignInRig(t, false, "")
		b := r.browser()
		b.devSignIn("alice@example.com", "operator")
		for range 3 {
			r.clock.Add(29 * time.Minute)
			if b.whoami() == "" {
				t.Fatal("an active session ended")
			}
		}
		r.clock.Add(31 * time.Minute)
		res := b.get("/test/whoami")
		if res.status != http.StatusSeeOther || !strings.Contains(strings.Join(res.header.Values("Set-Cookie"), ";"), "handoff_session=;") {
			t.Fatalf("after 31 idle minutes: %d %v", res.status, res.header.Values("Set-Cookie"))
		}
		if b.session() != "" {
			t.Fatal("the browser kept the expired cookie")
		}
	})
	t.Run("absolute timeout", func(t *testing.T) {
		r := newSignInRig(t, false, "")
		b := r.browser()
		b.devSignIn("alice@example.com", "operator")
		kept := b.session()
		for elapsed := 25 * time.Minute; elapsed < 12*time.Hour; elapsed += 25 * time.Minute {
			r.clock.Add(25 * time.Minute)
			if b.whoami() == "" {
				t.Fatalf("ended after %s", elapsed)
			}
		}
		r.clock.Add(25 * time.Minute)
		replay := r.browser() // a browser that ignores the cookie's Max-Age
		replay.setCookie("handoff_session", kept)
		if who := replay.whoami(); who != "" {
			t.Fatalf("past the absolute timeout: %q", who)
		}
	})
	t.Run("sign-out", func(t *testing.T) {
		r := newSignInRig(t, false, "")
		b := r.browser()
		b.devSignIn("alice@example.com", "operator")
		kept := b.session()
		res := b.post("/auth/logout", nil)
		if res.status != http.StatusSeeOther || res.header.Get("Location") != "/auth/signed-out" || b.session() != "" {
			t.Fatalf("logout: %d %s", res.status, res.header.Get("Location"))
		}
		replay := r.browser()
		replay.setCookie("handoff_session", kept)
		if who := replay.whoami(); who != "" {
			t.Fatalf("the signed-out session still works: %q", who)
		}
		if page := b.get("/auth/signed-out"); page.status != http.StatusOK || !strings.Contains(page.body, `data-testid="signed-out"`) {
			t.Fatalf("signed-out page: %d %s", page.status, page.body)
		}
	})
}

func TestSession_cookieOnHTTPS(t *testing.T) {
	r := newSignInRig(t, false, "https://desk.example.com")
	res := r.browser().devSignIn("alice@example.com", "operator")
	set := strings.Join(res.header.Values("Set-Cookie"), "\n")
	if !strings.Contains(set, "__Host-handoff_session=") || !strings.Contains(set, "; Secure") || !strings.Contains(set, "Path=/") ||
		strings.Contains(set, "Domain=") || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Lax") {
		t.Fatalf("https cookie: %s", set)
	}
}

func TestRequirePerson(t *testing.T) {
	r := newSignInRig(t, false, "")
	b := r.browser()
	res := b.get("/test/whoami?x=1")
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/auth/login?next="+url.QueryEscape("/test/whoami?x=1") {
		t.Fatalf("page: %d %s", res.status, res.header.Get("Location"))
	}
	if res := b.post("/test/whoami", nil); res.status != http.StatusSeeOther || res.header.Get("Location") != "/auth/login?next=%2Fdesk" {
		t.Fatalf("form post: %d %s", res.status, res.header.Get("Location"))
	}
	res = b.get("/test/whoami", "HX-Request", "true")
	if res.status != http.StatusUnauthorized || !strings.HasPrefix(res.header.Get("HX-Redirect"), "/auth/login?next=") {
		t.Fatalf("htmx: %d %v", res.status, res.header)
	}
	login := b.get("/auth/login?next=/desk/queue")
	for _, want := range []string{`data-testid="dev-banner"`, `data-testid="dev-signin"`, `value="/desk/queue"`} {
		if !strings.Contains(login.body, want) {
			t.Errorf("development sign-in page lacks %s", want)
		}
	}
	if res := b.devSignIn("", "operator"); res.status != http.StatusBadRequest || !strings.Contains(res.body, `data-testid="signin-error"`) {
		t.Fatalf("empty name: %d", res.status)
	}
}

// TestSignIn_OIDCModeHasNoDevelopmentSignIn: with a provider, the form is
// gone and nothing says "development".
func TestSignIn_OIDCModeHasNoDevelopmentSignIn(t *testing.T) {
	r := newSignInRig(t, true, "")
	b := r.browser()
	if res := b.devSignIn("mallory@example.com", "admin"); res.status != http.StatusNotFound || b.session() != "" {
		t.Fatalf("development sign-in with OIDC configured: %d", res.status)
	}
	if res := b.get("/auth/login?next=/desk/queue"); res.status != http.StatusSeeOther ||
		res.header.Get("Location") != "/auth/start?next="+url.QueryEscape("/desk/queue") {
		t.Fatalf("login: %d %s", res.status, res.header.Get("Location"))
	}
	out := b.get("/auth/signed-out")
	if strings.Contains(out.body, "dev-banner") || !strings.Contains(out.body, `data-testid="oidc-signin"`) {
		t.Fatalf("signed-out page in OIDC mode:\n%s", out.body)
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/desk/queue?state=failed_terminal": "/desk/queue?state=failed_terminal",
		"":                                  "/desk",
		"//evil.example.com/x":              "/desk",
		"https://evil.example.com":          "/desk",
		`/\evil.example.com`:                "/desk",
		"/desk\r\nSet-Cookie: x":            "/desk",
		"desk":                              "/desk",
		"javascript:alert(1)":               "/desk",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}
