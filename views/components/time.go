package components

import (
	"context"
	"fmt"
	"time"
)

// TimeMode is how a person reads the desk's times: in UTC (the default, and
// what the page says without JavaScript), in their browser's zone, or
// relative to now. The choice is kept in a cookie.
type TimeMode string

const (
	TimeUTC      TimeMode = "utc"
	TimeLocal    TimeMode = "local"
	TimeRelative TimeMode = "relative"
)

// TimeModes are the choices in the order the layout offers them.
var TimeModes = []TimeMode{TimeUTC, TimeLocal, TimeRelative}

// Label is the choice as people read it.
func (m TimeMode) Label() string {
	switch m {
	case TimeLocal:
		return "Local"
	case TimeRelative:
		return "Relative"
	}
	return "UTC"
}

// ParseTimeMode reads a choice; anything else is UTC.
func ParseTimeMode(v string) (TimeMode, bool) {
	for _, m := range TimeModes {
		if string(m) == v {
			return m, true
		}
	}
	return TimeUTC, false
}

type timeKey struct{}

type timeChoice struct {
	mode TimeMode
	now  time.Time
}

// WithTimeMode carries the person's choice, and the time relative times are
// counted from, to the components that render times.
func WithTimeMode(ctx context.Context, m TimeMode, now time.Time) context.Context {
	return context.WithValue(ctx, timeKey{}, timeChoice{mode: m, now: now})
}

// TimeModeOf is the choice the context carries; UTC when none.
func TimeModeOf(ctx context.Context) TimeMode {
	if c, ok := ctx.Value(timeKey{}).(timeChoice); ok {
		return c.mode
	}
	return TimeUTC
}

// TimeText is a time as the person chose to read it. Every form names its
// zone: "UTC" here, the browser's zone once desk.js localises a "local"
// time (the UTC text stays for a browser without JavaScript), and a
// relative time is zone-free with the UTC time in its title.
func TimeText(ctx context.Context, t time.Time) string {
	c, ok := ctx.Value(timeKey{}).(timeChoice)
	if !ok || c.mode != TimeRelative {
		return UTCText(t)
	}
	return Relative(c.now.Sub(t))
}

// Relative says how long ago (or how far ahead) something is: "3 m ago",
// "in 2 h 5 m", "just now".
func Relative(d time.Duration) string {
	switch {
	case d > -time.Second && d < time.Second:
		return "just now"
	case d < 0:
		return "in " + Age(-d)
	}
	return fmt.Sprintf("%s ago", Age(d))
}

// Plural counts a noun: "1 attempt", "2 attempts", "0 attempts".
func Plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
