// Package oidctest runs a real OpenID Connect provider in the test process
// (github.com/oauth2-proxy/mockoidc) for tests of the sign-in flow and of
// people calling the API with JWTs. Every token it issues can be tampered
// with before it is signed — another audience, issuer, nonce, expiry, or a
// signature by a key the provider never published — so each of the
// verifier's refusals is tested through the same code that accepts.
package oidctest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// Provider is a running mock provider.
type Provider struct {
	*mockoidc.MockOIDC
	badSignature atomic.Bool
}

// Person is who the provider signs in (or mints a token for).
type Person struct {
	Subject string
	Email   string
	Name    string
	Groups  []string
	// Tamper changes the ID token's claims before they are signed.
	Tamper func(claims map[string]any)
	// BadSignature signs the ID token with a key the provider never
	// published (under the published key's ID).
	BadSignature bool
}

// Start runs a provider until the test ends.
func Start(t testing.TB) *Provider {
	t.Helper()
	m, err := mockoidc.NewServer(nil) // the package's fixed key: no slow key generation per test
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{MockOIDC: m}
	if err := m.AddMiddleware(p.resign); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return p
}

// Next queues the person the next authorization request signs in.
func (p *Provider) Next(person Person) {
	p.badSignature.Store(person.BadSignature)
	p.QueueUser(&user{p: p, person: person})
}

// Claims are the ID token claims the provider would issue for person now,
// before any tampering.
func (p *Provider) Claims(person Person, nonce string) map[string]any {
	now := p.Now()
	c := map[string]any{"iss": p.Issuer(), "aud": []string{p.ClientID}, "sub": person.Subject,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(), "email": person.Email,
		"email_verified": true, "name": person.Name, "groups": person.Groups}
	if nonce != "" {
		c["nonce"] = nonce
	}
	return c
}

// IDToken mints an ID token for person, as a script would get from the
// provider to call the API.
func (p *Provider) IDToken(t testing.TB, person Person) string {
	t.Helper()
	c := p.Claims(person, "")
	if person.Tamper != nil {
		person.Tamper(c)
	}
	key := p.Keypair
	if person.BadSignature {
		key = otherKey(p)
	}
	s, err := key.SignJWT(jwt.MapClaims(c))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// user implements mockoidc.User with our claims and tampering.
type user struct {
	p      *Provider
	person Person
}

func (u *user) ID() string { return u.person.Subject }

func (u *user) Userinfo([]string) ([]byte, error) {
	return json.Marshal(map[string]any{"sub": u.person.Subject, "email": u.person.Email})
}

func (u *user) Claims(_ []string, base *mockoidc.IDTokenClaims) (jwt.Claims, error) {
	c := u.p.Claims(u.person, base.Nonce)
	if u.person.Tamper != nil {
		u.person.Tamper(c)
	}
	return jwt.MapClaims(c), nil
}

var (
	otherOnce sync.Once
	other     *rsa.PrivateKey
)

// otherKey is a key the provider never published, under its key's ID.
func otherKey(p *Provider) *mockoidc.Keypair {
	otherOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic("oidctest: generating a key: " + err.Error()) // crypto/rand does not fail on supported platforms
		}
		other = k
	})
	kid, _ := p.Keypair.KeyID()
	return &mockoidc.Keypair{PrivateKey: other, PublicKey: &other.PublicKey, Kid: kid}
}

// resign is the provider's middleware that, when the queued person asks
// for it, re-signs the token endpoint's ID token with the unpublished key.
func (p *Provider) resign(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != mockoidc.TokenEndpoint || !p.badSignature.Load() {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var body map[string]any
		// A refused request (the client trying another way to present its
		// secret) leaves the re-signing to the next one.
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &body) != nil || !p.badSignature.Swap(false) {
			copyResponse(w, rec)
			return
		}
		raw, _ := body["id_token"].(string)
		parts := strings.Split(raw, ".")
		payload, err := base64.RawURLEncoding.DecodeString(parts[min(1, len(parts)-1)])
		var claims jwt.MapClaims
		if err != nil || json.Unmarshal(payload, &claims) != nil {
			copyResponse(w, rec)
			return
		}
		body["id_token"], _ = otherKey(p).SignJWT(claims)
		out, _ := json.Marshal(body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	})
}

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = bytes.NewReader(rec.Body.Bytes()).WriteTo(w)
}
