package auth_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/auth/oidctest"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

var roleMap = auth.RoleMap{"viewers": domain.RoleViewer, "ops": domain.RoleOperator, "leads": domain.RoleApprover,
	"platform": domain.RoleAdmin, "audit": domain.RoleAuditor}

func newOIDC(t *testing.T, idp *oidctest.Provider) *auth.OIDC {
	t.Helper()
	o, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: idp.Issuer(), ClientID: idp.ClientID,
		ClientSecret: idp.ClientSecret, RedirectURL: "http://127.0.0.1:1/auth/callback", RoleMap: roleMap,
		Store: storetest.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestOIDC_Authenticate is a person calling the API with a JWT: every
// refusal goes through the same verifier that accepts.
func TestOIDC_Authenticate(t *testing.T) {
	idp := oidctest.Start(t)
	o := newOIDC(t, idp)
	ctx := context.Background()
	ann := oidctest.Person{Subject: "u-ann", Email: "ann@example.com", Name: "Ann", Groups: []string{"ops", "unrelated"}}

	p, err := o.Authenticate(ctx, idp.IDToken(t, ann))
	want := domain.Actor{Kind: domain.ActorPerson, Issuer: idp.Issuer(), Subject: "u-ann", Email: "ann@example.com",
		Name: "Ann", Role: domain.RoleOperator}
	if err != nil || p != want {
		t.Fatalf("valid token: %+v %v, want %+v", p, err, want)
	}
	withAZP := ann
	withAZP.Tamper = func(c map[string]any) { c["aud"] = []string{idp.ClientID, "other"}; c["azp"] = idp.ClientID }
	if _, err := o.Authenticate(ctx, idp.IDToken(t, withAZP)); err != nil {
		t.Fatalf("several audiences, authorized party is us: %v", err)
	}

	refused := map[string]struct {
		tamper func(c map[string]any)
		bad    bool
		code   domain.Code
	}{
		"wrong audience":           {tamper: func(c map[string]any) { c["aud"] = []string{"another-client"} }, code: domain.EUnauthenticated},
		"wrong issuer":             {tamper: func(c map[string]any) { c["iss"] = "https://evil.example.com/oidc" }, code: domain.EUnauthenticated},
		"expired":                  {tamper: expire, code: domain.EUnauthenticated},
		"badly signed":             {bad: true, code: domain.EUnauthenticated},
		"no subject":               {tamper: func(c map[string]any) { delete(c, "sub") }, code: domain.EUnauthenticated},
		"azp names another":        {tamper: func(c map[string]any) { c["aud"] = []string{idp.ClientID, "x"}; c["azp"] = "x" }, code: domain.EUnauthenticated},
		"several audiences no azp": {tamper: func(c map[string]any) { c["aud"] = []string{idp.ClientID, "x"} }, code: domain.EUnauthenticated},
		"no mapped role":           {tamper: func(c map[string]any) { c["groups"] = []string{"everyone"} }, code: domain.EForbidden},
		"no roles claim":           {tamper: func(c map[string]any) { delete(c, "groups") }, code: domain.EForbidden},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			p := ann
			p.Tamper, p.BadSignature = tc.tamper, tc.bad
			if a, err := o.Authenticate(ctx, idp.IDToken(t, p)); domain.ErrorCode(err) != tc.code {
				t.Fatalf("got %+v %v, want %s", a, err, tc.code)
			}
		})
	}
	for _, junk := range []string{"", "x.y.z", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", strings.Repeat("a", 20000)} {
		if _, err := o.Authenticate(ctx, junk); domain.ErrorCode(err) != domain.EUnauthenticated {
			t.Errorf("Authenticate(%.20q): %v", junk, err)
		}
	}
}

func expire(c map[string]any) {
	past := time.Now().Add(-time.Hour)
	c["iat"], c["nbf"], c["exp"] = past.Unix(), past.Unix(), past.Add(10*time.Minute).Unix()
}

// TestNewOIDC_unreachable: a provider that cannot be reached, or that
// accepts the connection and never answers, fails start-up with a clear
// error within the discovery timeout, never a hang.
func TestNewOIDC_unreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // a black hole: accepts, never answers
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	closed, _ := net.Listen("tcp", "127.0.0.1:0")
	closedAddr := closed.Addr().String()
	closed.Close()

	for name, issuer := range map[string]string{"hangs": "http://" + ln.Addr().String(), "refuses": "http://" + closedAddr} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: issuer, ClientID: "c", RoleMap: roleMap,
				DiscoveryTimeout: 300 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), issuer) {
				t.Fatalf("err = %v, want one naming the issuer", err)
			}
			if took := time.Since(start); took > 3*time.Second {
				t.Fatalf("took %s", took)
			}
		})
	}
	t.Run("issuer mismatch", func(t *testing.T) {
		idp := oidctest.Start(t)
		_, err := auth.NewOIDC(context.Background(), auth.OIDCConfig{Issuer: idp.Issuer() + "/", ClientID: "c", RoleMap: roleMap})
		if err == nil || !strings.Contains(err.Error(), "discovery failed") {
			t.Fatalf("err = %v", err)
		}
	})
}
