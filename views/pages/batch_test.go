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

// An incident's bulk form offers only decisions valid for its items, its
// default first: an unknown-outcome incident no longer defaults to
// "retry a terminal failure", which its preview would skip for every item.
func TestBulkDecisionsFitTheIncidentsStates(t *testing.T) {
	for _, tc := range []struct {
		states      string
		first       string
		mustNot     []string
		mustInclude []string
	}{
		{"unknown_outcome", "not_executed_retry", []string{"retry", "cancel"}, []string{"resend_same_key", "assign", "note"}},
		{"failed_terminal", "retry", []string{"not_executed_retry", "resend_same_key"}, []string{"cancel", "assign", "note"}},
		{"unknown_outcome, failed_terminal", "not_executed_retry", nil, []string{"retry", "cancel", "resend_same_key"}},
		{"", "retry", nil, []string{"not_executed_cancel", "resend_same_key", "note"}},
	} {
		got := values(BulkDecisions(tc.states))
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
