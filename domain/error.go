package domain

import (
	"errors"
	"fmt"
)

// Code names a kind of failure. The API maps each code to an HTTP status in
// one place (domain/error_status.go), shared by the API and the desk.
type Code string

// The error codes. They are part of the wire contract: clients switch on them.
const (
	EInvalid            Code = "validation_failed"
	EInvalidJSON        Code = "invalid_json"
	EUnauthenticated    Code = "unauthenticated"
	EForbidden          Code = "forbidden"
	ENotFound           Code = "not_found"
	EFingerprint        Code = "fingerprint_mismatch"
	ENotClaimable       Code = "not_claimable"
	EStaleLease         Code = "stale_lease"
	EInvalidTransition  Code = "invalid_transition"
	EVersionConflict    Code = "version_conflict"
	EOriginalUnresolved Code = "original_unresolved"
	ETooLarge           Code = "payload_too_large"
	EUnknownType        Code = "unknown_type"
	EUnavailable        Code = "unavailable"
	EConflict           Code = "conflict" // a concurrent writer won a compare-and-set; retried inside the Ledger
	EInternal           Code = "internal"
)

// FieldError names one bad input field.
type FieldError struct {
	Field   string
	Message string
}

// Error is the one error type that crosses package borders. Operation and
// Reason carry context for problems such as not_claimable.
type Error struct {
	Code      Code
	Message   string
	Fields    []FieldError
	Operation *Operation
	// Changes are, with a version conflict, what changed the operation
	// since the version the person saw, oldest first.
	Changes []AuditEvent
	// Reason is the not_claimable reason (completed, in_progress, …).
	Reason ClaimRefusal
	// RetryAfterSeconds is set with reason retry_later and with unavailable.
	RetryAfterSeconds int
	// Err is the underlying cause, logged but never shown to clients.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap marks err as an internal or availability failure with a message that
// is safe to show.
func Wrap(code Code, err error, msg string) *Error {
	return &Error{Code: code, Message: msg, Err: err}
}

// Invalid builds a validation_failed error listing the bad fields.
func Invalid(fields ...FieldError) *Error {
	msg := "the request is not valid"
	if len(fields) == 1 {
		msg = fields[0].Field + ": " + fields[0].Message
	}
	return &Error{Code: EInvalid, Message: msg, Fields: fields}
}

// ErrorCode returns the code of err, EInternal when it carries none.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EInternal
}

// AsError returns err as *Error, wrapping unknown errors as internal.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: EInternal, Message: "internal error", Err: err}
}
