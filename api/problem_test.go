package api

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// TestStatus is API.md's table: one row per code.
func TestStatus(t *testing.T) {
	want := map[domain.Code]int{
		domain.EInvalid: 400, domain.EInvalidJSON: 400, domain.EUnauthenticated: 401, domain.EForbidden: 403,
		domain.ENotFound: 404, domain.EFingerprint: 422, domain.EUnknownType: 422, domain.ENotClaimable: 409,
		domain.EStaleLease: 409, domain.EInvalidTransition: 409, domain.EVersionConflict: 409,
		domain.EOriginalUnresolved: 409, domain.EConflict: 409, domain.ETooLarge: 413, domain.EUnavailable: 503,
		domain.EInternal: 500, domain.Code("no_such_code"): 500,
	}
	for code, status := range want {
		if got := Status(code); got != status {
			t.Errorf("Status(%s) = %d, want %d", code, got, status)
		}
	}
	if len(domain.Codes()) != len(want)-1 || len(titles) != len(domain.Codes()) {
		t.Errorf("domain.Codes() has %d codes, titles %d; the test knows %d", len(domain.Codes()), len(titles), len(want)-1)
	}
}

// failOnce runs s.fail for err through gin and returns the answer.
func failOnce(t *testing.T, err error) (*httptest.ResponseRecorder, problem) {
	t.Helper()
	s := &server{log: slog.New(slog.DiscardHandler)}
	w := httptest.NewRecorder()
	c, _ := gin.CreateTestContext(w)
	c.Request = httptest.NewRequest("GET", "/", nil)
	c.Set(keyRequestID, "req_test")
	s.fail(c, err)
	var p problem
	if ct := w.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q", ct)
	}
	if jerr := json.Unmarshal(w.Body.Bytes(), &p); jerr != nil {
		t.Fatalf("body %s: %v", w.Body, jerr)
	}
	if p.Status != w.Code {
		t.Fatalf("body status %d, header status %d", p.Status, w.Code)
	}
	return w, p
}

func TestFail_problems(t *testing.T) {
	next := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	op := domain.Operation{ID: "op_1", Namespace: "ns", Key: "k", State: domain.FailedRetryable, NextRetryAt: &next}
	tests := []struct {
		name       string
		err        error
		status     int
		typ        string
		header     string
		headerWant string
	}{
		{"fields", domain.Invalid(domain.FieldError{Field: "key", Message: "bad"}), 400, "/problems/validation-failed", "", ""},
		{"unauthenticated", domain.Errorf(domain.EUnauthenticated, "no"), 401, "/problems/unauthenticated", "WWW-Authenticate", `Bearer realm="handoff"`},
		{"retry later", &domain.Error{Code: domain.ENotClaimable, Reason: domain.RefusedRetryLater, RetryAfterSeconds: 20, Operation: &op, Message: "later"},
			409, "/problems/not-claimable", "Retry-After", "20"},
		{"unavailable", domain.Wrap(domain.EUnavailable, errors.New("dial"), "db down"), 503, "/problems/unavailable", "Retry-After", "2"},
		{"fingerprint", domain.Errorf(domain.EFingerprint, "other content"), 422, "/problems/fingerprint-mismatch", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, p := failOnce(t, tc.err)
			if w.Code != tc.status || p.Type != tc.typ || p.RequestID != "req_test" || p.Title == "" {
				t.Fatalf("got %d %+v", w.Code, p)
			}
			if tc.header != "" && w.Header().Get(tc.header) != tc.headerWant {
				t.Errorf("%s = %q, want %q", tc.header, w.Header().Get(tc.header), tc.headerWant)
			}
		})
	}
	_, p := failOnce(t, tests[2].err)
	if p.Reason != "retry_later" || p.Operation == nil || p.Operation.ID != "op_1" || p.Operation.NextRetryAt == nil {
		t.Errorf("not_claimable problem lacks reason or operation: %+v", p)
	}
	_, p = failOnce(t, tests[0].err)
	if len(p.Errors) != 1 || p.Errors[0].Field != "key" {
		t.Errorf("errors = %+v", p.Errors)
	}
}

// TestFail_internalLeaksNothing: raw errors are logged, never shown.
func TestFail_internalLeaksNothing(t *testing.T) {
	for _, err := range []error{
		errors.New("pq: password authentication failed for user secret"),
		domain.Wrap(domain.EInternal, errors.New("pq: secret"), "db said secret"),
	} {
		w, p := failOnce(t, err)
		if w.Code != http.StatusInternalServerError || p.Detail != "internal error" || p.Code != "internal" {
			t.Errorf("%v: got %d %+v", err, w.Code, p)
		}
		if strings.Contains(w.Body.String(), "secret") {
			t.Errorf("body leaks the cause: %s", w.Body)
		}
	}
}
