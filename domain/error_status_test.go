package domain

import (
	"net/http"
	"testing"
)

// TestHTTPStatus_EveryCode: every code has its own status, and only an
// internal error answers 500.
func TestHTTPStatus_EveryCode(t *testing.T) {
	if len(Codes()) != len(httpStatus) {
		t.Fatalf("Codes() lists %d codes, the status table %d", len(Codes()), len(httpStatus))
	}
	want := map[Code]int{EInvalid: 400, EInvalidJSON: 400, EUnauthenticated: 401, EForbidden: 403, ENotFound: 404,
		EFingerprint: 422, ENotClaimable: 409, EStaleLease: 409, EInvalidTransition: 409, EVersionConflict: 409,
		EOriginalUnresolved: 409, ETooLarge: 413, EUnknownType: 422, EUnavailable: 503, EConflict: 409, EInternal: 500}
	for _, c := range Codes() {
		if got := HTTPStatus(c); got != want[c] {
			t.Errorf("HTTPStatus(%s) = %d, want %d", c, got, want[c])
		}
	}
	if got := HTTPStatus(Code("no_such_code")); got != http.StatusInternalServerError {
		t.Errorf("an unknown code answers %d, want 500", got)
	}
}
