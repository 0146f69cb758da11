package components

import (
	"testing"
	"unicode/utf8"
)

// Long keys are shortened in the middle: a path keeps its first and last
// segments, anything else its head and tail; short keys stay whole.
func TestMiddleShort(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"evt_1:crm_task", "evt_1:crm_task"},
		{"tenant-eu-west-1/shop-7781/checkout-2026-12-06/charge:order_2026-12-06_88101",
			"tenant-eu-west-1/…/charge:order_2026-12-06_88101"},
		{"order_2026-12-06_88101_order_2026-12-06_88101_order_2026-12-06_88102",
			"order_2026-12-0…-06_88101_order_2026-12-06_88102"},
	} {
		got := MiddleShort(tc.key, KeyBudget)
		if got != tc.want || utf8.RuneCountInString(got) > KeyBudget {
			t.Errorf("%q shortened to %q, want %q", tc.key, got, tc.want)
		}
	}
}
