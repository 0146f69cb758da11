package web

import (
	"testing"
	"time"
)

// An event's detail reads as text: nested objects as "name: value", lists
// as "a, b", and a time as a time the page shows the person's way — never
// raw JSON or an ISO string.
func TestDetailFieldsReadAsText(t *testing.T) {
	got := detailFields([]byte(`{"error":{"class":"timeout","code":"","message":"read timeout"},"dedup_until":"2026-12-01T10:00:00Z",
		"items":["op_1","op_2"],"attempt":3}`))
	want := map[string]string{"attempt": "3", "dedup until": "2026-12-01T10:00:00Z", "error": "class: timeout; message: read timeout",
		"items": "op_1, op_2"}
	if len(got) != len(want) {
		t.Fatalf("fields %+v", got)
	}
	for _, f := range got {
		if f.Value != want[f.Key] {
			t.Errorf("%s = %q, want %q", f.Key, f.Value, want[f.Key])
		}
		if (f.Key == "dedup until") != (f.Time != nil) {
			t.Errorf("%s: time %v", f.Key, f.Time)
		}
	}
	for _, f := range got {
		if f.Time != nil && !f.Time.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) {
			t.Errorf("time %v", f.Time)
		}
	}
}
