package auth

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

func TestParseRoleMap(t *testing.T) {
	m, err := ParseRoleMap(" ops=operator, leads=approver,platform=admin,audit=auditor,/team=a=b=viewer,")
	if err != nil {
		t.Fatal(err)
	}
	want := RoleMap{"ops": domain.RoleOperator, "leads": domain.RoleApprover, "platform": domain.RoleAdmin,
		"audit": domain.RoleAuditor, "/team=a=b": domain.RoleViewer}
	if len(m) != len(want) {
		t.Fatalf("got %v, want %v", m, want)
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%q → %v, want %v", k, m[k], v)
		}
	}
	if m, err := ParseRoleMap(""); err != nil || len(m) != 0 {
		t.Errorf("empty: %v %v", m, err)
	}
	for _, bad := range []string{"ops", "=operator", "ops=root", "ops=operator,ops=admin"} {
		if _, err := ParseRoleMap(bad); err == nil {
			t.Errorf("ParseRoleMap(%q) accepted", bad)
		}
	}
}

func TestRoleMap_RoleFor(t *testing.T) {
	m := RoleMap{"ops": domain.RoleOperator, "leads": domain.RoleApprover, "platform": domain.RoleAdmin,
		"audit": domain.RoleAuditor, "all": domain.RoleViewer}
	for _, tc := range []struct {
		groups []string
		want   domain.Role
		ok     bool
	}{
		{[]string{"ops"}, domain.RoleOperator, true},
		{[]string{"ops", "leads", "unknown"}, domain.RoleApprover, true},
		{[]string{"leads", "platform", "ops"}, domain.RoleAdmin, true},
		{[]string{"all", "audit"}, domain.RoleAuditor, true}, // auditor beats viewer: it keeps the export right
		{[]string{"audit", "ops"}, domain.RoleOperator, true},
		{[]string{"unknown"}, domain.Role{}, false},
		{nil, domain.Role{}, false},
	} {
		got, ok := m.RoleFor(tc.groups)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RoleFor(%v) = %v %v, want %v %v", tc.groups, got, ok, tc.want, tc.ok)
		}
	}
}

func TestClaimValues(t *testing.T) {
	var claims map[string]any
	_ = json.Unmarshal([]byte(`{"groups": ["ops", 7, "leads"], "role": "admin",
		"realm_access": {"roles": ["approver-group"]}, "n": 3}`), &claims)
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"groups", []string{"ops", "leads"}},
		{"role", []string{"admin"}},
		{"realm_access.roles", []string{"approver-group"}},
		{"realm_access.missing", nil},
		{"n", nil},
		{"groups.x", nil},
		{"missing", nil},
	} {
		if got := claimValues(claims, tc.path); !slices.Equal(got, tc.want) {
			t.Errorf("claimValues(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

func TestPersonFrom(t *testing.T) {
	no, yes := false, true
	p, err := personFrom("https://idp", personClaims{Subject: "u1", Email: "a@x.com", EmailVerified: &yes, Username: "ann"}, domain.RoleOperator)
	if err != nil || p.Email != "a@x.com" || p.Name != "ann" || p.Issuer != "https://idp" || p.Kind != domain.ActorPerson {
		t.Fatalf("verified: %+v %v", p, err)
	}
	// An email the provider has not verified could be anyone's; the
	// identity falls back to the subject.
	p, err = personFrom("https://idp", personClaims{Subject: "u1", Email: "boss@x.com", EmailVerified: &no}, domain.RoleOperator)
	if err != nil || p.Email != "" || p.Identity() != "u1" {
		t.Fatalf("unverified: %+v %v", p, err)
	}
	if p, err = personFrom("https://idp", personClaims{Subject: "u1", Email: "a@x.com"}, domain.RoleOperator); err != nil || p.Email != "a@x.com" || p.Name != "a@x.com" {
		t.Fatalf("no email_verified claim: %+v %v", p, err)
	}
	if _, err := personFrom("https://idp", personClaims{}, domain.RoleOperator); domain.ErrorCode(err) != domain.EUnauthenticated {
		t.Fatalf("no subject: %v", err)
	}
	long := make([]byte, 300)
	for i := range long {
		long[i] = 'a'
	}
	if _, err := personFrom("https://idp", personClaims{Subject: string(long)}, domain.RoleOperator); domain.ErrorCode(err) != domain.EUnauthenticated {
		t.Fatalf("long subject: %v", err)
	}
}
