package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// check4xx fails unless err is nil or a domain.Error whose status is 4xx:
// nothing a client sends may become a 5xx.
func check4xx(t *testing.T, input any, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var e *domain.Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: error %T %v is not a domain.Error", input, err, err)
	}
	if s := Status(e.Code); s < 400 || s > 499 {
		t.Fatalf("%q: code %s maps to %d", input, e.Code, s)
	}
	if e.Code == domain.EInvalid && len(e.Fields) == 0 {
		t.Fatalf("%q: validation_failed without fields", input)
	}
}

func FuzzDecodeRegister(f *testing.F) {
	f.Add([]byte(`{"key":"evt_42:crm_task","type":"crm.task.create","content":{"a":1},"claim":{"worker":"w-1","lease_seconds":30}}`))
	f.Add([]byte(`{"key":"k","type":"t","content":null,"caused_by":null,"claim":null}`))
	f.Add([]byte(`{"key":"k","type":"t","content":{},"extra":1}`))
	f.Add([]byte(`{"key":"k"} trailing`))
	f.Add([]byte(`{"key":"a","type":"t","content":{"x":{"y":1,"y":2}},"KEY":"b"}`))
	f.Add([]byte(`{"k\u0065y":"a","key":"b","type":"t","content":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		reg, err := parseRegister(data)
		check4xx(t, data, err)
		if err == nil && hasDuplicateMember(data) {
			t.Fatalf("%q: accepted with a member named twice", data)
		}
		if err == nil && reg.Claim != nil && (reg.Claim.Lease < 0 || reg.Claim.Lease > time.Hour) {
			t.Fatalf("%q: lease %v passed", data, reg.Claim.Lease)
		}
	})
}

func FuzzDecodeSettle(f *testing.F) {
	f.Add([]byte(`{"lease_token":3,"outcome":"completed","result":{"ref":"crm_123","data":{"x":[1,2]}}}`))
	f.Add([]byte(`{"lease_token":3,"outcome":"failed_retryable","error":{"class":"rate_limited","code":"429","message":"slow down","retry_after_seconds":20}}`))
	f.Add([]byte(`{"lease_token":-1,"outcome":"bogus","error":{"class":"nope","retry_after_seconds":1e99}}`))
	f.Add([]byte(`{"outcome":"unknown_outcome"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := parseSettle(data)
		check4xx(t, data, err)
		if err == nil && (s.Outcome == (domain.Outcome{}) || (s.Error != nil && s.Error.Class.IsZero()) || s.RetryAfter < 0) {
			t.Fatalf("%q: accepted an incomplete settle %+v", data, s)
		}
	})
}

func FuzzListQuery(f *testing.F) {
	f.Add("state=unknown_outcome&state=failed_terminal&type=crm.task.create&limit=10")
	f.Add("older_than=2d&q=timeout&cursor=abc")
	f.Add("limit=0&older_than=-1h&state=nope&bogus=1")
	f.Add("key=%zz&limit=201")
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := parseListQuery(raw, now)
		check4xx(t, raw, err)
		if err == nil && (q.Limit < 1 || q.Limit > maxListLimit || q.CreatedBefore.After(now)) {
			t.Fatalf("%q: accepted %+v", raw, q)
		}
	})
}

// fieldsOf returns the field names of a validation error.
func fieldsOf(err error) []string {
	var names []string
	for _, f := range domain.AsError(err).Fields {
		names = append(names, f.Field)
	}
	return names
}

func TestDecode_errors(t *testing.T) {
	tests := []struct {
		name   string
		parse  func([]byte) error
		body   string
		code   domain.Code
		fields string
	}{
		{"empty", registerP, "  ", domain.EInvalidJSON, ""},
		{"syntax", registerP, `{"key":`, domain.EInvalidJSON, ""},
		{"not an object", registerP, `[1]`, domain.EInvalidJSON, ""},
		{"trailing", registerP, `{"key":"k"} {}`, domain.EInvalidJSON, ""},
		{"unknown field", registerP, `{"key":"k","kee":"x"}`, domain.EInvalid, "kee"},
		// A member twice, or in another case, is a parser differential:
		// encoding/json would take the last one, or match it anyway.
		{"member twice", registerP, `{"key":"a","type":"t","content":{},"key":"b"}`, domain.EInvalid, "key"},
		{"member in another case", registerP, `{"key":"a","KEY":"b","type":"t","content":{}}`, domain.EInvalid, "KEY"},
		{"only member in another case", registerP, `{"Key":"a","type":"t","content":{}}`, domain.EInvalid, "Key"},
		{"nested member twice", registerP, `{"key":"k","type":"t","content":{},"claim":{"worker":"w","worker":"x"}}`, domain.EInvalid, "claim.worker"},
		{"nested member in another case", registerP, `{"key":"k","type":"t","content":{},"claim":{"Worker":"w"}}`, domain.EInvalid, "claim.Worker"},
		{"content member twice", registerP, `{"key":"k","type":"t","content":{"a":1,"a":2}}`, domain.EInvalid, "content.a"},
		{"settle error member in another case", settleP, `{"lease_token":1,"outcome":"failed_retryable","error":{"CLASS":"transient"}}`, domain.EInvalid, "error.CLASS"},
		{"wrong type", registerP, `{"key":7}`, domain.EInvalid, "key"},
		{"nested type", registerP, `{"claim":{"lease_seconds":1.5}}`, domain.EInvalid, "claim.lease_seconds"},
		{"content null", registerP, `{"key":"k","type":"t","content":null}`, domain.EInvalid, "content"},
		{"lease 0", registerP, `{"key":"k","type":"t","content":{},"claim":{"worker":"w","lease_seconds":0}}`, domain.EInvalid, "claim.lease_seconds"},
		{"lease 3601", claimP, `{"worker":"w","lease_seconds":3601}`, domain.EInvalid, "lease_seconds"},
		{"no lease token", settleP, `{"outcome":"completed","result":{"ref":"r"}}`, domain.EInvalid, "lease_token"},
		{"bad enums", settleP, `{"lease_token":1,"outcome":"done","error":{"class":"boom"}}`, domain.EInvalid, "outcome,error.class"},
		{"result without ref", settleP, `{"lease_token":1,"outcome":"completed","result":{"data":1}}`, domain.EInvalid, "result.ref"},
		{"found missing", reconcileP, `{"evidence":"x"}`, domain.EInvalid, "found"},
		{"assign missing", assignP, `{"expected_version":3}`, domain.EInvalid, "assignee"},
		{"resolve", resolveP, `{"action":"confirm_not_executed","then":"confirm_executed","reason":"r"}`, domain.EInvalid, "expected_version,then"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse([]byte(tc.body))
			if domain.ErrorCode(err) != tc.code || strings.Join(fieldsOf(err), ",") != tc.fields {
				t.Fatalf("err = %v (fields %v), want %s on %q", err, fieldsOf(err), tc.code, tc.fields)
			}
		})
	}
}

func TestDecode_accepts(t *testing.T) {
	reg, err := parseRegister([]byte(`{"key":"evt_42:crm_task","type":"crm.task.create","content":{"a":1},
		"event_id":"evt_42","caused_by":null,"supersedes":null,"provider_key":null,"claim":{"worker":"w-1"}}`))
	if err != nil || reg.Claim == nil || reg.Claim.Lease != 0 || reg.EventID != "evt_42" {
		t.Fatalf("register: %+v, %v", reg, err)
	}
	// The content's members are the workflow's own: any case goes.
	if _, err := parseRegister([]byte(`{"key":"k","type":"t","content":{"a":1,"A":2,"list":[{"x":1},{"x":2}]}}`)); err != nil {
		t.Fatalf("content with members in two cases: %v", err)
	}
	a, err := parseAssign([]byte(`{"assignee":null,"expected_version":3}`))
	if err != nil || a.Assignee != "" || a.ExpectedVersion != 3 {
		t.Fatalf("unassign: %+v, %v", a, err)
	}
	s, err := parseSettle([]byte(`{"lease_token":3,"outcome":"failed_retryable","error":{"class":"rate_limited","retry_after_seconds":20}}`))
	if err != nil || s.RetryAfter != 20*time.Second || s.Error.Class != domain.ClassRateLimited {
		t.Fatalf("settle: %+v, %v", s, err)
	}
	r, err := parseResolve([]byte(`{"action":"resend_same_key","reason":"the mailer dedups by key","expected_version":4}`))
	if err != nil || r.Action != domain.ResolveResendSameKey || r.ExpectedVersion != 4 {
		t.Fatalf("resolve resend_same_key: %+v, %v", r, err)
	}
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	q, err := parseListQuery("state=unknown_outcome&state=failed_terminal&older_than=2d&limit=10", now)
	if err != nil || len(q.States) != 2 || q.Limit != 10 || !q.CreatedBefore.Equal(now.Add(-48*time.Hour)) {
		t.Fatalf("list: %+v, %v", q, err)
	}
}

func registerP(b []byte) error  { _, err := parseRegister(b); return err }
func claimP(b []byte) error     { _, err := parseClaim(b); return err }
func settleP(b []byte) error    { _, err := parseSettle(b); return err }
func reconcileP(b []byte) error { _, err := parseReconcile(b); return err }
func assignP(b []byte) error    { _, err := parseAssign(b); return err }
func resolveP(b []byte) error   { _, err := parseResolve(b); return err }

// hasDuplicateMember reports whether any object of a JSON text names a
// member twice, read with encoding/json's tokenizer.
func hasDuplicateMember(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	var walk func() bool
	walk = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return false
				}
				name, _ := k.(string)
				if seen[name] {
					return true
				}
				seen[name] = true
				if walk() {
					return true
				}
			}
			_, _ = dec.Token()
		case json.Delim('['):
			for dec.More() {
				if walk() {
					return true
				}
			}
			_, _ = dec.Token()
		}
		return false
	}
	return walk()
}
