package main

import (
	"sync/atomic"
	"time"
)

// pacer spreads lifecycle starts evenly over time at a fixed rate, shared by
// every client: start n is due at start + n/rate. It measures latency at a
// chosen load rather than at saturation, where every call queues behind the
// others and p99 says only that the server is full. A client that finds its
// slot already past starts at once and counts as late: many late starts mean
// the rate is above what the server sustains.
type pacer struct {
	rate  float64 // lifecycles/s; 0 turns pacing off
	start time.Time
	next  atomic.Int64
	late  atomic.Int64
	sleep func(time.Duration)
	now   func() time.Time
}

func newPacer(rate float64, start time.Time) *pacer {
	return &pacer{rate: rate, start: start, sleep: time.Sleep, now: time.Now}
}

// wait blocks until the next start is due and reports whether it is due
// before deadline.
func (p *pacer) wait(deadline time.Time) bool {
	if p == nil || p.rate <= 0 {
		return true
	}
	n := p.next.Add(1) - 1
	due := p.start.Add(time.Duration(float64(n) / p.rate * float64(time.Second)))
	if !due.Before(deadline) {
		return false
	}
	if d := due.Sub(p.now()); d > 0 {
		p.sleep(d)
	} else if d < -time.Millisecond {
		p.late.Add(1)
	}
	return true
}
