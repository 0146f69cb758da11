package domain

import "testing"

// TestPersonalData: the forms of email addresses and phone numbers keys
// are refused for, and the identifiers that only look numeric.
func TestPersonalData(t *testing.T) {
	for s, want := range map[string]string{
		"alice@example.com:crm_task":        "an email address",
		"evt_1:a.b+tag@mail.example.co.jp":  "an email address",
		"sms:+819012345678":                 "a phone number",
		"sms:+44 20 7946 0958":              "a phone number",
		"sms:090-1234-5678":                 "a phone number",
		"call/09012345678":                  "a phone number",
		"uk:020 7946 0958":                  "a phone number",
		"us:(555) 123-4567":                 "a phone number",
		"us:555-123-4567":                   "a phone number",
		"evt_42:crm_task":                   "",
		"user@v2:task":                      "",
		"k-0000000001":                      "",
		"run-2026-12-01T10:00:05.999999999": "",
		"hk_51c2a9e0123456789bd":            "",
		"evt_1:u_4f3a2b1c0d9e8f7a":          "",
		"order-20261201123456":              "",
		"tz+0900":                           "",
	} {
		if got := PersonalData(s); got != want {
			t.Errorf("PersonalData(%q) = %q, want %q", s, got, want)
		}
	}
}
