package domain

import "net/http"

// Codes lists every error code, in the order of the wire contract's table.
func Codes() []Code {
	return []Code{EInvalid, EInvalidJSON, EUnauthenticated, EForbidden, ENotFound, EFingerprint,
		ENotClaimable, EStaleLease, EInvalidTransition, EVersionConflict, EOriginalUnresolved,
		ETooLarge, EUnknownType, EUnavailable, EConflict, EInternal}
}

// httpStatus is the one table from error codes to HTTP statuses, shared by
// the JSON API and the desk so that the two cannot drift. Only the status
// numbers live here; how a problem is rendered stays in api/ and web/.
var httpStatus = map[Code]int{
	EInvalid:            http.StatusBadRequest,
	EInvalidJSON:        http.StatusBadRequest,
	EUnauthenticated:    http.StatusUnauthorized,
	EForbidden:          http.StatusForbidden,
	ENotFound:           http.StatusNotFound,
	EFingerprint:        http.StatusUnprocessableEntity,
	EUnknownType:        http.StatusUnprocessableEntity,
	ENotClaimable:       http.StatusConflict,
	EStaleLease:         http.StatusConflict,
	EInvalidTransition:  http.StatusConflict,
	EVersionConflict:    http.StatusConflict,
	EOriginalUnresolved: http.StatusConflict,
	// The Ledger retries lost compare-and-sets itself; one that escapes is
	// still a conflict with another writer, not a server fault.
	EConflict:    http.StatusConflict,
	ETooLarge:    http.StatusRequestEntityTooLarge,
	EUnavailable: http.StatusServiceUnavailable,
	EInternal:    http.StatusInternalServerError,
}

// HTTPStatus is the status that answers an error with this code. A code
// missing from the table is a bug and answers 500.
func HTTPStatus(code Code) int {
	if s, ok := httpStatus[code]; ok {
		return s
	}
	return http.StatusInternalServerError
}
