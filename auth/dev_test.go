package auth

import (
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

func TestCheckLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"127.0.0.1:8080", true},
		{"127.1.2.3:80", true},
		{"[::1]:8080", true},
		{"localhost:8080", true},
		{"LOCALHOST:1", true},
		{"[::ffff:127.0.0.1]:8080", true},
		{"0.0.0.0:8080", false},
		{":8080", false},
		{"[::]:8080", false},
		{"10.0.0.5:8080", false},
		{"192.168.1.2:8080", false},
		{"handoff.example.com:8080", false},
		{"localhost.example.com:8080", false},
		{"127.0.0.1", false}, // no port: not a listen address
	} {
		err := CheckLoopback(tc.addr)
		if (err == nil) != tc.ok {
			t.Errorf("CheckLoopback(%q) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
		if err != nil && tc.addr != "127.0.0.1" && !strings.Contains(err.Error(), "loopback") {
			t.Errorf("CheckLoopback(%q): the error should say why: %v", tc.addr, err)
		}
	}
}

func TestDevPerson(t *testing.T) {
	p, err := DevPerson("  Alice@Example.com ", "approver")
	if err != nil || p.Email != "alice@example.com" || p.Subject != "alice@example.com" || p.Role != domain.RoleApprover ||
		p.Issuer != DevIssuer || p.Kind != domain.ActorPerson || p.Name != "Alice@Example.com" {
		t.Fatalf("email name: %+v %v", p, err)
	}
	p, err = DevPerson("Bob Builder", "operator")
	if err != nil || p.Email != "" || p.Identity() != "bob builder" {
		t.Fatalf("plain name: %+v %v", p, err)
	}
	for _, tc := range []struct{ name, role, field string }{
		{"", "operator", "name"}, {"x\x00y", "operator", "name"}, {strings.Repeat("a", 101), "viewer", "name"},
		{"alice", "root", "role"}, {"alice", "", "role"},
	} {
		_, err := DevPerson(tc.name, tc.role)
		e := domain.AsError(err)
		if e.Code != domain.EInvalid || len(e.Fields) != 1 || e.Fields[0].Field != tc.field {
			t.Errorf("DevPerson(%q, %q) = %v, want validation_failed on %s", tc.name, tc.role, err, tc.field)
		}
	}
}
