package main

import (
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

var oidcEnv = []string{"HANDOFF_OIDC_ISSUER", "https://idp.example.com/realms/ops", "HANDOFF_OIDC_CLIENT_ID", "handoff",
	"HANDOFF_OIDC_CLIENT_SECRET", "s3cret", "HANDOFF_PUBLIC_URL", "https://handoff.example.com/",
	"HANDOFF_ROLE_MAP", "ops=operator,leads=approver,platform=admin,audit=auditor"}

func TestSignInFromEnv(t *testing.T) {
	c, err := signInFromEnv(env(oidcEnv...), "0.0.0.0:8080")
	if err != nil {
		t.Fatal(err)
	}
	if c.redirectURL() != "https://handoff.example.com/auth/callback" || c.RolesClaim != "groups" ||
		c.RoleMap["leads"] != domain.RoleApprover || c.IdleTimeout != 30*time.Minute || c.AbsoluteTimeout != 12*time.Hour || c.Scopes != nil {
		t.Fatalf("%+v", c)
	}
	dev, err := signInFromEnv(env(), "127.0.0.1:8080")
	if err != nil || dev.Issuer != "" || dev.PublicURL != "http://127.0.0.1:8080" {
		t.Fatalf("development: %+v %v", dev, err)
	}
	c, err = signInFromEnv(env(append(oidcEnv, "HANDOFF_OIDC_SCOPES", "email groups", "HANDOFF_SESSION_IDLE_TIMEOUT", "10m",
		"HANDOFF_OIDC_ROLES_CLAIM", "realm_access.roles")...), "0.0.0.0:8080")
	if err != nil || strings.Join(c.Scopes, " ") != "openid email groups" || c.IdleTimeout != 10*time.Minute || c.RolesClaim != "realm_access.roles" {
		t.Fatalf("options: %+v %v", c, err)
	}

	for name, tc := range map[string]struct {
		env  []string
		says string
	}{
		"client without issuer":  {[]string{"HANDOFF_OIDC_CLIENT_ID", "x"}, "HANDOFF_OIDC_ISSUER is not"},
		"issuer without client":  {[]string{"HANDOFF_OIDC_ISSUER", "https://idp", "HANDOFF_ROLE_MAP", "a=admin"}, "HANDOFF_OIDC_CLIENT_ID"},
		"issuer without roles":   {without(oidcEnv, "HANDOFF_ROLE_MAP"), "HANDOFF_ROLE_MAP"},
		"bad role":               {replace(oidcEnv, "HANDOFF_ROLE_MAP", "ops=root"), "HANDOFF_ROLE_MAP"},
		"plain http, not local":  {replace(oidcEnv, "HANDOFF_PUBLIC_URL", "http://handoff.example.com"), "must be https"},
		"public URL with a path": {replace(oidcEnv, "HANDOFF_PUBLIC_URL", "https://x.example.com/handoff"), "no path"},
		"bad duration":           {append(oidcEnv, "HANDOFF_SESSION_ABSOLUTE_TIMEOUT", "forever"), "HANDOFF_SESSION_ABSOLUTE_TIMEOUT"},
		"idle beyond absolute":   {append(oidcEnv, "HANDOFF_SESSION_IDLE_TIMEOUT", "13h"), "longer than"},
		"idle under a minute":    {append(oidcEnv, "HANDOFF_SESSION_IDLE_TIMEOUT", "59s"), "HANDOFF_SESSION_IDLE_TIMEOUT (59s) is under 1m0s"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := signInFromEnv(env(tc.env...), "0.0.0.0:8080")
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want one saying %q", err, tc.says)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatal("the error shows the client secret")
			}
		})
	}
	if _, err := signInFromEnv(env(replace(oidcEnv, "HANDOFF_PUBLIC_URL", "http://127.0.0.1:8080")...), "127.0.0.1:8080"); err != nil {
		t.Fatalf("plain http on loopback: %v", err)
	}
}

func without(kv []string, key string) []string {
	var out []string
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i] != key {
			out = append(out, kv[i], kv[i+1])
		}
	}
	return out
}

func replace(kv []string, key, value string) []string { return append(without(kv, key), key, value) }
