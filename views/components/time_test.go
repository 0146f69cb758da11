package components

import (
	"context"
	"testing"
	"time"
)

func TestTimeText(t *testing.T) {
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	at := now.Add(-90 * time.Minute).In(time.FixedZone("CET", 3600))
	for mode, want := range map[TimeMode]string{TimeUTC: "2026-11-30 13:30:00 UTC", TimeLocal: "2026-11-30 13:30:00 UTC",
		TimeRelative: "1 h 30 m ago"} {
		if got := TimeText(WithTimeMode(context.Background(), mode, now), at); got != want {
			t.Errorf("%s: %q, want %q", mode, got, want)
		}
	}
	if got := TimeText(context.Background(), at); got != "2026-11-30 13:30:00 UTC" {
		t.Errorf("no choice: %q", got)
	}
	if got := Relative(-2 * time.Hour); got != "in 2 h 0 m" {
		t.Errorf("ahead: %q", got)
	}
	if got := Relative(0); got != "just now" {
		t.Errorf("now: %q", got)
	}
	if m, ok := ParseTimeMode("mars"); ok || m != TimeUTC {
		t.Errorf("unknown mode: %q %v", m, ok)
	}
}

func TestPlural(t *testing.T) {
	for n, want := range map[int]string{0: "0 attempts", 1: "1 attempt", 2: "2 attempts"} {
		if got := Plural(n, "attempt", "attempts"); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}
