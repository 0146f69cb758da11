package web

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/auth/oidctest"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// The sign-in tests run the desk's real engine — CSRF guard, session
// middleware, sign-in routes — over real HTTP, against a real database and,
// for OIDC, a real provider in the test process. A browser is an
// http.Client with a cookie jar that follows no redirect by itself, so each
// step of the flow can be inspected and tampered with.

// rigClock is the sessions' and the OIDC client's clock.
type rigClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *rigClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *rigClock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.now = c.now.Add(d) }

var rigRoles = auth.RoleMap{"viewers": domain.RoleViewer, "ops": domain.RoleOperator, "leads": domain.RoleApprover,
	"platform": domain.RoleAdmin}

type signInRig struct {
	t     *testing.T
	base  string // the desk's URL, also its public URL
	store *store.Store
	idp   *oidctest.Provider // nil: the development sign-in
	clock *rigClock
	// sessionCookie is the session cookie's name: __Host- prefixed when
	// the public URL is https.
	sessionCookie string
}

// newSignInRig serves the desk; withOIDC signs in through the provider,
// otherwise through the development form. publicURL overrides the public
// URL (for https cookie names); "" means the server's own URL.
func newSignInRig(t *testing.T, withOIDC bool, publicURL string) *signInRig {
	t.Helper()
	st := storetest.New(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &signInRig{t: t, base: "http://" + ln.Addr().String(), store: st, clock: &rigClock{now: time.Now()}}
	if publicURL == "" {
		publicURL = r.base
	}
	r.sessionCookie = "handoff_session"
	if strings.HasPrefix(publicURL, "https:") {
		r.sessionCookie = "__Host-handoff_session"
	}
	sessions := auth.NewSessions(st, st)
	sessions.Now = r.clock.Now
	si := SignIn{Sessions: sessions, PublicURL: publicURL, SessionMaxAge: auth.DefaultAbsoluteTimeout}
	if withOIDC {
		r.idp = oidctest.Start(t)
		o, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: r.idp.Issuer(), ClientID: r.idp.ClientID,
			ClientSecret: r.idp.ClientSecret, RedirectURL: r.base + "/auth/callback", RoleMap: rigRoles, Store: st, Now: r.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		si.OIDC = o
	}
	e, err := New(Config{Ledger: domain.NewLedger(st, testCards()), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), SignIn: si})
	if err != nil {
		t.Fatal(err)
	}
	// whoami stands for any desk page and any desk POST: registered after
	// the sign-in middleware, it gets the session and the CSRF guard.
	whoami := func(c *gin.Context) {
		p, _ := personOf(c)
		c.String(http.StatusOK, p.Identity()+" "+p.Role.String())
	}
	e.GET("/test/whoami", requirePerson, whoami)
	e.POST("/test/whoami", requirePerson, whoami)
	srv := httptest.NewUnstartedServer(e)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return r
}

// signIns counts sign-ins in the system audit stream.
func (r *signInRig) signIns() int {
	r.t.Helper()
	events, err := r.store.Timeline(context.Background(), domain.SystemStream)
	if err != nil {
		r.t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Action == "signed_in" {
			n++
		}
	}
	return n
}

// browser is one browser: its cookies and no automatic redirects.
type browser struct {
	t    *testing.T
	rig  *signInRig
	jar  *cookiejar.Jar
	http *http.Client
}

func (r *signInRig) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: r.t, rig: r, jar: jar, http: &http.Client{Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// reply is a response with its body read.
type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) location() *url.URL {
	u, _ := url.Parse(r.header.Get("Location"))
	return u
}

// do sends a request; target is a path on the desk or an absolute URL;
// headers are name/value pairs.
func (b *browser) do(method, target string, form url.Values, headers ...string) reply {
	b.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.rig.base + target
	}
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		b.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(raw)}
}

func (b *browser) get(target string, headers ...string) reply {
	return b.do("GET", target, nil, headers...)
}

// post is a form post as a browser sends it from one of the desk's pages.
func (b *browser) post(path string, form url.Values) reply {
	return b.do("POST", path, form, "Sec-Fetch-Site", "same-origin", "Origin", b.rig.base)
}

// cookie is the value of the desk's cookie, "" when the browser has none.
func (b *browser) cookie(name string) string {
	u, _ := url.Parse(b.rig.base)
	for _, c := range b.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// session is the browser's session cookie, "" when it has none.
func (b *browser) session() string { return b.cookie(b.rig.sessionCookie) }

func (b *browser) setCookie(name, value string) {
	u, _ := url.Parse(b.rig.base)
	b.jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

// whoami is who the desk thinks this browser is: "" when it is sent to
// sign in.
func (b *browser) whoami() string {
	b.t.Helper()
	r := b.get("/test/whoami")
	switch {
	case r.status == http.StatusOK:
		return r.body
	case r.status == http.StatusSeeOther && strings.HasPrefix(r.header.Get("Location"), "/auth/login?next="):
		return ""
	}
	b.t.Fatalf("whoami: %d %s", r.status, r.body)
	return ""
}

// devSignIn signs in through the development form.
func (b *browser) devSignIn(name, role string) reply {
	return b.post("/auth/login", url.Values{"name": {name}, "role": {role}, "next": {"/test/whoami"}})
}
