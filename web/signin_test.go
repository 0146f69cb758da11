package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/auth/oidctest"
	"github.com/opshandoff/handoff/domain"
)

var ann = oidctest.Person{Subject: "u-ann", Email: "ann@example.com", Name: "Ann Ops", Groups: []string{"ops", "misc"}}

// start opens /auth/start and returns the provider URL it sends the browser
// to.
func (b *browser) start() *url.URL {
	b.t.Helper()
	r := b.get("/auth/start?next=/test/whoami")
	if r.status != http.StatusFound || !strings.HasPrefix(r.header.Get("Location"), b.rig.idp.AuthorizationEndpoint()) {
		b.t.Fatalf("start: %d %s", r.status, r.header.Get("Location"))
	}
	return r.location()
}

// atProvider visits the provider and returns the callback URL it sends the
// browser back to.
func (b *browser) atProvider(authURL *url.URL) *url.URL {
	b.t.Helper()
	r := b.get(authURL.String())
	if r.status != http.StatusFound || !strings.HasPrefix(r.header.Get("Location"), b.rig.base+"/auth/callback?") {
		b.t.Fatalf("provider: %d %s %s", r.status, r.header.Get("Location"), r.body)
	}
	return r.location()
}

// oidcSignIn runs the whole flow for the person and returns the callback's
// answer and the callback URL.
func (b *browser) oidcSignIn(p oidctest.Person) (reply, *url.URL) {
	b.t.Helper()
	b.rig.idp.Next(p)
	cb := b.atProvider(b.start())
	return b.get(cb.String()), cb
}

func withQuery(u *url.URL, key, value string) string {
	c := *u
	q := c.Query()
	if value == "" {
		q.Del(key)
	} else {
		q.Set(key, value)
	}
	c.RawQuery = q.Encode()
	return c.String()
}

func TestOIDCSignIn_success(t *testing.T) {
	r := newSignInRig(t, true, "")
	b := r.browser()
	q := b.start().Query() // what the provider is asked: code flow, PKCE S256, state and nonce
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43 ||
		len(q.Get("state")) != 43 || len(q.Get("nonce")) != 43 || q.Get("code_verifier") != "" ||
		q.Get("redirect_uri") != r.base+"/auth/callback" || !strings.Contains(q.Get("scope"), "groups") {
		t.Fatalf("authorization request: %v", q)
	}
	if b.cookie("handoff_login") != q.Get("state") {
		t.Fatal("the browser-binding cookie does not hold the state")
	}
	res, _ := b.oidcSignIn(ann)
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/test/whoami" {
		t.Fatalf("callback: %d %s %s", res.status, res.header.Get("Location"), res.body)
	}
	set := strings.Join(res.header.Values("Set-Cookie"), "\n")
	if !strings.Contains(set, "handoff_session=") || !strings.Contains(set, "HttpOnly") || !strings.Contains(set, "SameSite=Lax") ||
		!strings.Contains(set, "Path=/") || strings.Contains(set, "Domain=") {
		t.Fatalf("session cookie attributes: %s", set)
	}
	if b.cookie("handoff_login") != "" {
		t.Fatal("the login cookie outlived the sign-in")
	}
	if who := b.whoami(); who != "ann@example.com operator" {
		t.Fatalf("whoami = %q", who)
	}
	events, err := r.store.Timeline(context.Background(), domain.SystemStream)
	if err != nil || len(events) != 1 {
		t.Fatalf("system events: %+v %v", events, err)
	}
	e := events[0]
	var d map[string]any
	_ = json.Unmarshal(e.Detail, &d)
	if e.Action != "signed_in" || e.Actor.Issuer != r.idp.Issuer() || e.Actor.Subject != "u-ann" || e.Actor.Email != "ann@example.com" ||
		e.Actor.Role != domain.RoleOperator || d["method"] != "oidc" || d["issuer"] != r.idp.Issuer() {
		t.Fatalf("sign-in event: %+v %s", e, e.Detail)
	}
	if e.ClientAddr != "127.0.0.1" {
		t.Fatalf("sign-in event client address %q", e.ClientAddr)
	}
	if strings.Contains(string(e.Detail), b.session()) {
		t.Fatal("the audit event carries the cookie value")
	}
}

// TestOIDCSignIn_refused: each way a callback can be wrong ends without a
// session — no cookie, no sign-in event, and the desk still sends the
// browser to sign in.
func TestOIDCSignIn_refused(t *testing.T) {
	expired := ann
	expired.Tamper = func(c map[string]any) {
		past := time.Now().Add(-2 * time.Hour)
		c["iat"], c["nbf"], c["exp"] = past.Unix(), past.Unix(), past.Add(time.Hour).Unix()
	}
	otherAudience, otherIssuer, noNonce, badSig, noRole := ann, ann, ann, ann, ann
	otherAudience.Tamper = func(c map[string]any) { c["aud"] = []string{"another-client"} }
	otherIssuer.Tamper = func(c map[string]any) { c["iss"] = "https://evil.example.com/oidc" }
	noNonce.Tamper = func(c map[string]any) { delete(c, "nonce") }
	badSig.BadSignature = true
	noRole.Groups = []string{"everyone"}

	cases := map[string]struct {
		status int
		says   string
		run    func(r *signInRig, b *browser) reply
	}{
		"missing state": {401, "did not start in this browser", func(r *signInRig, b *browser) reply {
			r.idp.Next(ann)
			return b.get(withQuery(b.atProvider(b.start()), "state", ""))
		}},
		"wrong state": {401, "did not start in this browser", func(r *signInRig, b *browser) reply {
			r.idp.Next(ann)
			return b.get(withQuery(b.atProvider(b.start()), "state", "guessed"))
		}},
		"forged state and cookie": {401, "unknown or was already used", func(r *signInRig, b *browser) reply {
			r.idp.Next(ann)
			cb := b.atProvider(b.start())
			b.setCookie("handoff_login", "forged")
			return b.get(withQuery(cb, "state", "forged"))
		}},
		"reused state": {401, "unknown or was already used", func(r *signInRig, b *browser) reply {
			first, cb := r.browser().oidcSignIn(ann)
			if first.status != http.StatusSeeOther {
				t.Fatalf("first use: %d %s", first.status, first.body)
			}
			b.setCookie("handoff_login", cb.Query().Get("state")) // even with the binding cookie
			return b.get(cb.String())
		}},
		"callback opened in another browser": {401, "did not start in this browser", func(r *signInRig, b *browser) reply {
			r.idp.Next(ann)
			cb := b.atProvider(b.start())
			return r.browser().get(cb.String())
		}},
		"wrong nonce": {401, "nonce", func(r *signInRig, b *browser) reply {
			r.idp.Next(ann)
			authURL := b.start()
			return b.get(b.atProvider(mustParse(withQuery(authURL, "nonce", "attacker-chosen"))).String())
		}},
		"no nonce":       {401, "nonce", func(r *signInRig, b *browser) reply { res, _ := b.oidcSignIn(noNonce); return res }},
		"wrong audience": {401, "not valid", func(r *signInRig, b *browser) reply { res, _ := b.oidcSignIn(otherAudience); return res }},
		"wrong issuer":   {401, "not valid", func(r *signInRig, b *browser) reply { res, _ := b.oidcSignIn(otherIssuer); return res }},
		"expired token":  {401, "not valid", func(r *signInRig, b *browser) reply { res, _ := b.oidcSignIn(expired); return res }},
		"badly signed":   {401, "not valid", func(r *signInRig, b *browser) reply { res, _ := b.oidcSignIn(badSig); return res }},
		"no mapped role": {403, "mapped to a Handoff role", func(r *signInRig, b *browser) reply { res, _ := b.oidcSignIn(noRole); return res }},
		"sign-in too slow": {401, "took longer", func(r *signInRig, b *browser) reply {
			r.idp.Next(ann)
			cb := b.atProvider(b.start())
			r.clock.Add(11 * time.Minute)
			return b.get(cb.String())
		}},
		"provider error": {401, "access_denied", func(r *signInRig, b *browser) reply {
			cb := b.start()
			return b.get("/auth/callback?error=access_denied&state=" + url.QueryEscape(cb.Query().Get("state")))
		}},
		"code not the provider's": {401, "refused the sign-in code", func(r *signInRig, b *browser) reply {
			r.idp.Next(ann)
			return b.get(withQuery(b.atProvider(b.start()), "code", "made-up"))
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			r := newSignInRig(t, true, "")
			b := r.browser()
			before := r.signIns()
			res := tc.run(r, b)
			if res.status != tc.status || !strings.Contains(res.body, tc.says) {
				t.Fatalf("got %d, want %d saying %q:\n%s", res.status, tc.status, tc.says, res.body)
			}
			if strings.Contains(strings.Join(res.header.Values("Set-Cookie"), ";"), "handoff_session=") || b.session() != "" {
				t.Fatal("a refused sign-in set a session cookie")
			}
			if name == "reused state" {
				before++ // the first, legitimate use
			}
			if r.signIns() != before {
				t.Fatal("a refused sign-in was audited as a sign-in")
			}
			if who := b.whoami(); who != "" {
				t.Fatalf("signed in as %q", who)
			}
		})
	}
}

func mustParse(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
