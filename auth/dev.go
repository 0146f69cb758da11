package auth

import (
	"fmt"
	"net"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/opshandoff/handoff/domain"
)

// The development sign-in lets whoever reaches the desk say who they are
// and pick a role, with no provider. That is only tolerable on a machine's
// own loopback interface, so the server refuses to start with it anywhere
// else, and every page says it is in use.

// DevIssuer is the issuer of development sign-ins, so the audit trail can
// never mistake one for a provider's.
const DevIssuer = "urn:handoff:development-sign-in"

// DevPerson is the person a development sign-in form describes: a name (an
// email address, if it looks like one, becomes the email) and a role.
func DevPerson(name, role string) (domain.Actor, error) {
	name = strings.TrimSpace(name)
	var errs []domain.FieldError
	if n := utf8.RuneCountInString(name); n < 1 || n > 100 || !utf8.ValidString(name) || strings.IndexFunc(name, unicode.IsControl) >= 0 {
		errs = append(errs, domain.FieldError{Field: "name", Message: "must be 1-100 printable characters"})
	}
	r, err := domain.ParseRole(role)
	if err != nil {
		errs = append(errs, domain.FieldError{Field: "role", Message: "must be viewer, operator, approver, admin or auditor"})
	}
	if len(errs) > 0 {
		return domain.Actor{}, domain.Invalid(errs...)
	}
	p := domain.Actor{Kind: domain.ActorPerson, Issuer: DevIssuer, Subject: strings.ToLower(name), Name: name, Role: r}
	if at := strings.Index(name, "@"); at > 0 && at < len(name)-1 && !strings.ContainsAny(name, " \t") {
		p.Email = strings.ToLower(name)
	}
	return p, nil
}

// CheckLoopback refuses a listen address that is reachable from other
// machines: only 127.0.0.0/8, ::1 and localhost pass. An empty host (":8080")
// listens on every interface and is refused.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %v", addr, err)
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("the development sign-in lets anyone who reaches the desk act as anyone, so it is only "+
		"allowed on a loopback address (127.0.0.1, ::1, localhost), not %q: configure OIDC "+
		"(HANDOFF_OIDC_ISSUER, HANDOFF_OIDC_CLIENT_ID, HANDOFF_OIDC_CLIENT_SECRET, HANDOFF_PUBLIC_URL) or listen on 127.0.0.1", addr)
}
