package auth

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/opshandoff/handoff/domain"
)

// RoleMap maps the values of the roles claim (groups, app roles) to Handoff
// roles. A person with several mapped values gets the highest role.
type RoleMap map[string]domain.Role

// ParseRoleMap reads HANDOFF_ROLE_MAP: "ops=operator,leads=approver". The
// last "=" separates, so a group name may itself contain one; values are
// taken exactly as the provider sends them (Keycloak's full group paths
// such as "/ops" included).
func ParseRoleMap(s string) (RoleMap, error) {
	m := RoleMap{}
	for _, pair := range strings.Split(s, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		i := strings.LastIndex(pair, "=")
		if i <= 0 {
			return nil, fmt.Errorf("%q is not group=role", pair)
		}
		group, name := strings.TrimSpace(pair[:i]), strings.TrimSpace(pair[i+1:])
		role, err := domain.ParseRole(name)
		if err != nil {
			return nil, fmt.Errorf("%q: %q is not a role (viewer, operator, approver, admin, auditor)", pair, name)
		}
		if prev, ok := m[group]; ok && prev != role {
			return nil, fmt.Errorf("group %q is mapped to both %s and %s", group, prev, role)
		}
		m[group] = role
	}
	return m, nil
}

// precedence orders the roles for "highest wins". Auditor ranks with viewer
// in the domain (it only adds export), so it wins over viewer here: someone
// in both groups keeps the export right. Anyone mapped to operator or above
// loses it, since a person holds one role; admin may export anyway.
var precedence = []domain.Role{domain.RoleViewer, domain.RoleAuditor, domain.RoleOperator, domain.RoleApprover, domain.RoleAdmin}

// RoleFor returns the highest role any of the values maps to; false when
// none maps to a role.
func (m RoleMap) RoleFor(values []string) (domain.Role, bool) {
	best := -1
	for _, v := range values {
		if r, ok := m[v]; ok {
			best = max(best, slices.Index(precedence, r))
		}
	}
	if best < 0 {
		return domain.Role{}, false
	}
	return precedence[best], true
}

// claimValues reads the roles claim at path, whose dots walk into nested
// objects ("realm_access.roles" for Keycloak realm roles). A claim may be a
// list of strings or one string.
func claimValues(claims map[string]any, path string) []string {
	var v any = claims
	for _, part := range strings.Split(path, ".") {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = obj[part]
	}
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// personClaims are the ID token claims a person is made of.
type personClaims struct {
	Subject       string `json:"sub"`
	Email         string `json:"email"`
	EmailVerified *bool  `json:"email_verified"`
	Name          string `json:"name"`
	Username      string `json:"preferred_username"`
}

// maxClaimLen bounds what is copied from a token into sessions and audit
// events.
const maxClaimLen = 255

// personFrom builds the person a verified token stands for. An email the
// provider says is unverified is dropped: the email is the identity that
// four-eyes and approvals compare, and an unverified one could be anybody's.
func personFrom(issuer string, c personClaims, role domain.Role) (domain.Actor, error) {
	email := c.Email
	if c.EmailVerified != nil && !*c.EmailVerified {
		email = ""
	}
	name := c.Name
	if name == "" {
		name = c.Username
	}
	if name == "" {
		name = email
	}
	if name == "" {
		name = c.Subject
	}
	for _, s := range []string{c.Subject, email, name} {
		if utf8.RuneCountInString(s) > maxClaimLen || !utf8.ValidString(s) {
			return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "the token carries an over-long or invalid claim")
		}
	}
	if c.Subject == "" {
		return domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "the token names no subject")
	}
	return domain.Actor{Kind: domain.ActorPerson, Issuer: issuer, Subject: c.Subject, Email: email, Name: name, Role: role}, nil
}
