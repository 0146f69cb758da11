package main

import (
	"testing"
	"time"
)

// The pacer hands out evenly spaced start times, stops at the deadline, and
// counts the starts that were already overdue when a client asked.
func TestPacer_SpreadsStartsEvenly(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	var slept []time.Duration
	p := newPacer(100, t0) // one start every 10 ms
	p.now = func() time.Time { return clock }
	p.sleep = func(d time.Duration) { slept = append(slept, d); clock = clock.Add(d) }

	deadline := t0.Add(50 * time.Millisecond)
	n := 0
	for p.wait(deadline) {
		n++
	}
	if n != 5 {
		t.Fatalf("started %d lifecycles in 50 ms at 100/s, want 5", n)
	}
	for i, d := range slept {
		if d != 10*time.Millisecond {
			t.Fatalf("sleep %d was %v, want 10ms (slept %v)", i, d, slept)
		}
	}

	// A client that comes back 30 ms late finds its start overdue.
	late := newPacer(100, t0)
	late.now = func() time.Time { return t0.Add(30 * time.Millisecond) }
	late.sleep = func(time.Duration) { t.Fatal("an overdue start must not sleep") }
	for range 2 {
		late.wait(t0.Add(time.Second))
	}
	if got := late.late.Load(); got != 2 {
		t.Fatalf("late starts = %d, want 2", got)
	}
}

// Without a rate the pacer never waits.
func TestPacer_OffWithoutRate(t *testing.T) {
	p := newPacer(0, time.Now())
	p.sleep = func(time.Duration) { t.Fatal("an unpaced run must not sleep") }
	if !p.wait(time.Now().Add(-time.Hour)) {
		t.Fatal("an unpaced run stops only at the clients' own deadline check")
	}
}
