package components

import (
	"fmt"
	"time"
)

// Age says how long ago something happened in the largest two units, which
// is what a person scanning a queue needs: "3 d 4 h", "2 h 5 m", "40 s".
func Age(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	switch {
	case d >= 24*time.Hour:
		return fmt.Sprintf("%d d %d h", d/(24*time.Hour), d%(24*time.Hour)/time.Hour)
	case d >= time.Hour:
		return fmt.Sprintf("%d h %d m", d/time.Hour, d%time.Hour/time.Minute)
	case d >= time.Minute:
		return fmt.Sprintf("%d m", d/time.Minute)
	}
	return fmt.Sprintf("%d s", d/time.Second)
}

// UTC is the machine-readable form of a time for <time datetime>.
func UTC(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// UTCText is the readable UTC form shown until the browser localises it.
func UTCText(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }

// StateLabel is a state as people read it.
func StateLabel(state string) string {
	switch state {
	case "awaiting_approval":
		return "awaiting approval"
	case "action_pending":
		return "action pending"
	case "failed_retryable":
		return "failed, will retry"
	case "failed_terminal":
		return "failed terminally"
	case "unknown_outcome":
		return "unknown outcome"
	}
	return state
}
