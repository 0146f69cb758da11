package web

import (
	"net/http"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestStatusOf_NoDomainCodeIsAServerFault: the desk shows every domain code
// but an internal error as a client status, as the API does; a refused form
// is the one documented departure (422 where the API says 400).
func TestStatusOf_NoDomainCodeIsAServerFault(t *testing.T) {
	for _, c := range domain.Codes() {
		got := statusOf(c)
		switch {
		case c == domain.EInternal:
			if got != http.StatusInternalServerError {
				t.Errorf("statusOf(%s) = %d, want 500", c, got)
			}
		case c == domain.EInvalid || c == domain.EInvalidJSON:
			if got != http.StatusUnprocessableEntity {
				t.Errorf("statusOf(%s) = %d, want 422 (a refused form)", c, got)
			}
		case got != domain.HTTPStatus(c):
			t.Errorf("statusOf(%s) = %d, the API answers %d", c, got, domain.HTTPStatus(c))
		}
		if c != domain.EInternal && got >= 500 && c != domain.EUnavailable {
			t.Errorf("statusOf(%s) = %d: a domain code shown as a server fault", c, got)
		}
	}
}
