package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/web"
)

// signInConfig is how people sign in: an OIDC provider when an issuer is
// configured, the development sign-in otherwise.
type signInConfig struct {
	Issuer, ClientID, ClientSecret string
	PublicURL                      string // default http://HANDOFF_ADDR
	RolesClaim                     string
	RoleMap                        auth.RoleMap
	Scopes                         []string // nil: chosen from what the provider offers
	DiscoveryTimeout               time.Duration
	IdleTimeout, AbsoluteTimeout   time.Duration
}

func signInFromEnv(getenv func(string) string, addr string) (signInConfig, error) {
	c := signInConfig{Issuer: getenv("HANDOFF_OIDC_ISSUER"), ClientID: getenv("HANDOFF_OIDC_CLIENT_ID"),
		ClientSecret: getenv("HANDOFF_OIDC_CLIENT_SECRET"), PublicURL: strings.TrimSuffix(getenv("HANDOFF_PUBLIC_URL"), "/"),
		RolesClaim: orDefault(getenv("HANDOFF_OIDC_ROLES_CLAIM"), "groups"), DiscoveryTimeout: 10 * time.Second,
		IdleTimeout: auth.DefaultIdleTimeout, AbsoluteTimeout: auth.DefaultAbsoluteTimeout}
	for _, d := range []struct {
		name string
		to   *time.Duration
	}{{"HANDOFF_OIDC_DISCOVERY_TIMEOUT", &c.DiscoveryTimeout}, {"HANDOFF_SESSION_IDLE_TIMEOUT", &c.IdleTimeout},
		{"HANDOFF_SESSION_ABSOLUTE_TIMEOUT", &c.AbsoluteTimeout}} {
		if v := getenv(d.name); v != "" {
			t, err := time.ParseDuration(v)
			if err != nil || t <= 0 {
				return c, fmt.Errorf("%s: %q is not a positive duration", d.name, v)
			}
			*d.to = t
		}
	}
	if c.IdleTimeout < auth.MinIdleTimeout {
		return c, fmt.Errorf("HANDOFF_SESSION_IDLE_TIMEOUT (%s) is under %s: a session's activity is recorded once a minute, "+
			"so a shorter idle timeout would end sessions in use", c.IdleTimeout, auth.MinIdleTimeout)
	}
	if c.IdleTimeout > c.AbsoluteTimeout {
		return c, fmt.Errorf("HANDOFF_SESSION_IDLE_TIMEOUT (%s) is longer than HANDOFF_SESSION_ABSOLUTE_TIMEOUT (%s)", c.IdleTimeout, c.AbsoluteTimeout)
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + addr
	}
	u, err := url.Parse(c.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return c, fmt.Errorf("HANDOFF_PUBLIC_URL: %q must be an http(s) URL with no path, such as https://handoff.example.com", c.PublicURL)
	}
	if v := getenv("HANDOFF_OIDC_SCOPES"); v != "" {
		c.Scopes = strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' })
		if !slices.Contains(c.Scopes, "openid") {
			c.Scopes = append([]string{"openid"}, c.Scopes...)
		}
	}
	if c.RoleMap, err = auth.ParseRoleMap(getenv("HANDOFF_ROLE_MAP")); err != nil {
		return c, fmt.Errorf("HANDOFF_ROLE_MAP: %w", err)
	}
	if c.Issuer == "" {
		if c.ClientID != "" || c.ClientSecret != "" {
			return c, fmt.Errorf("HANDOFF_OIDC_CLIENT_ID or _SECRET is set but HANDOFF_OIDC_ISSUER is not")
		}
		return c, nil
	}
	var missing []string
	for _, v := range []struct{ name, value string }{{"HANDOFF_OIDC_CLIENT_ID", c.ClientID}, {"HANDOFF_OIDC_CLIENT_SECRET", c.ClientSecret}} {
		if v.value == "" {
			missing = append(missing, v.name)
		}
	}
	if len(c.RoleMap) == 0 {
		missing = append(missing, "HANDOFF_ROLE_MAP (nobody could sign in without one)")
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("HANDOFF_OIDC_ISSUER is set, so these are needed too: %s", strings.Join(missing, ", "))
	}
	// Session cookies over plain http are readable on the wire: only a
	// loopback address may go without TLS.
	if u.Scheme == "http" && auth.CheckLoopback(net.JoinHostPort(u.Hostname(), "0")) != nil {
		return c, fmt.Errorf("HANDOFF_PUBLIC_URL: %q must be https (plain http is allowed only on a loopback address)", c.PublicURL)
	}
	return c, nil
}

// redirectURL is where the provider sends people back: register it with
// the provider exactly so.
func (c signInConfig) redirectURL() string {
	return strings.TrimSuffix(c.PublicURL, "/") + "/auth/callback"
}

// wire builds the desk's sign-in and the API's person verifier (nil without
// OIDC). The development sign-in is refused unless addr is loopback; the
// provider is discovered here, once, within the discovery timeout.
func (c signInConfig) wire(ctx context.Context, addr string, s *store.Store) (web.SignIn, auth.Authenticator, error) {
	sessions := auth.NewSessions(s, s)
	sessions.Idle, sessions.Absolute = c.IdleTimeout, c.AbsoluteTimeout
	si := web.SignIn{Sessions: sessions, PublicURL: c.PublicURL, SessionMaxAge: c.AbsoluteTimeout}
	// The database's key signs the desk's flash cookie: every replica
	// verifies what another signed.
	key, err := s.ServerKey(ctx, "desk-cookies")
	if err != nil {
		return si, nil, err
	}
	si.CookieKey = key
	if c.Issuer == "" {
		if err := auth.CheckLoopback(addr); err != nil {
			return si, nil, fmt.Errorf("no HANDOFF_OIDC_ISSUER is set: %w", err)
		}
		slog.Warn("development sign-in: anyone who reaches the desk may pick any name and role; configure OIDC for real use")
		return si, nil, nil
	}
	o, err := auth.NewOIDC(ctx, auth.OIDCConfig{Issuer: c.Issuer, ClientID: c.ClientID, ClientSecret: c.ClientSecret,
		RedirectURL: c.redirectURL(), RolesClaim: c.RolesClaim, RoleMap: c.RoleMap, Scopes: c.Scopes,
		DiscoveryTimeout: c.DiscoveryTimeout, Store: s})
	if err != nil {
		return si, nil, err
	}
	si.OIDC = o
	slog.Info("OIDC sign-in", "issuer", c.Issuer, "redirect_url", c.redirectURL(), "roles_claim", c.RolesClaim)
	return si, o, nil
}
