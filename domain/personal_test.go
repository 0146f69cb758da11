package domain

import (
	"math/rand/v2"
	"testing"
)

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

// TestPersonalData_patterns: the hand-written phone matcher and the @
// check before the email pattern say what the three patterns say, on
// random identifiers over the characters the patterns care about.
func TestPersonalData_patterns(t *testing.T) {
	const alphabet = "0123456789012345678901234567890123456789abcz_:.-+@() "
	rng := rand.New(rand.NewPCG(1, 2))
	found := 0
	for range 200000 {
		b := make([]byte, 1+rng.IntN(30))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		s := string(b)
		want := ""
		if emailRE.MatchString(s) {
			want = "an email address"
		} else if e164RE.MatchString(s) || nationalRE.MatchString(s) {
			want = "a phone number"
		}
		if got := PersonalData(s); got != want {
			t.Fatalf("PersonalData(%q) = %q, the patterns say %q", s, got, want)
		}
		if want != "" {
			found++
		}
	}
	if found < 1000 {
		t.Fatalf("only %d random identifiers held personal data: the test proves little", found)
	}
}

// BenchmarkPersonalData: the guard on a key as handoff-load sends them and
// on a short one.
func BenchmarkPersonalData(b *testing.B) {
	for _, k := range []string{"load_1796149760019591757_7843:task", "evt_42:crm_task"} {
		b.Run(k, func(b *testing.B) {
			for b.Loop() {
				PersonalData(k)
			}
		})
	}
}
