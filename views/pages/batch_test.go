package pages

import (
	"slices"
	"testing"
)

func values(opts []Option) []string {
	var v []string
	for _, o := range opts {
		v = append(v, o.Value)
	}
	return v
}

// An incident's bulk form offers only decisions valid for its items,
// the safest first: one that sends nothing again, never a retry.
func TestBulkDecisionsFitTheIncidentsStates(t *testing.T) {
	for _, tc := range []struct {
		states      string
		first       string
		mustNot     []string
		mustInclude []string
	}{
		{"unknown_outcome", "not_executed_cancel", []string{"retry", "cancel"}, []string{"resend_same_key", "not_executed_retry", "assign", "note"}},
		{"failed_terminal", "cancel", []string{"not_executed_retry", "resend_same_key"}, []string{"retry", "assign", "note"}},
		{"unknown_outcome, failed_terminal", "not_executed_cancel", nil, []string{"retry", "cancel", "resend_same_key"}},
		{"", "not_executed_cancel", nil, []string{"cancel", "resend_same_key", "note"}},
	} {
		got := values(BulkDecisions(tc.states))
		for i, v := range got {
			if sendsAgain(v) && slices.ContainsFunc(got[i:], func(o string) bool { return !sendsAgain(o) }) {
				t.Errorf("%q offers %q, which may send again, before a safer one: %v", tc.states, v, got)
			}
		}
		if got[0] != tc.first {
			t.Errorf("%q: default %q, want %q (all: %v)", tc.states, got[0], tc.first, got)
		}
		for _, v := range tc.mustNot {
			if slices.Contains(got, v) {
				t.Errorf("%q offers %q, invalid for its items: %v", tc.states, v, got)
			}
		}
		for _, v := range tc.mustInclude {
			if !slices.Contains(got, v) {
				t.Errorf("%q lacks %q: %v", tc.states, v, got)
			}
		}
	}
}

// TestThousands: the counts of "select all N matching" read as numbers do.
func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 12345: "12,345", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
