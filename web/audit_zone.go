package web

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/views/components"
)

// zoneCookie is the browser's offset from UTC in minutes east, which
// desk.js keeps: with times shown in the browser's zone, the audit filter's
// From and To are read in that zone too, as the page shows them.
const zoneCookie = "handoff_zone"

// browserZone is the browser's zone when the person reads times in it
// (Local) and desk.js said which it is; nil otherwise — then the filter's
// times are UTC, as the page's are.
func browserZone(c *gin.Context) *time.Location {
	if timeMode(c) != components.TimeLocal {
		return nil
	}
	v, err := c.Cookie(zoneCookie)
	if err != nil {
		return nil
	}
	m, err := strconv.Atoi(v)
	if err != nil || m < -14*60 || m > 14*60 {
		return nil
	}
	return time.FixedZone("local", m*60)
}

// zoneLabel names the zone the audit filter's times are read in.
func zoneLabel(c *gin.Context) string {
	if browserZone(c) != nil {
		return "local"
	}
	return "UTC"
}

// inZone reads a filter time typed in the datetime-local form in the
// browser's zone, when the person reads times in it; a time with its own
// offset (RFC 3339), or none, stays as it was read.
func inZone(c *gin.Context, typed string, t time.Time) time.Time {
	loc := browserZone(c)
	if loc == nil || t.IsZero() {
		return t
	}
	l, err := time.ParseInLocation(localTime, typed, loc)
	if err != nil {
		return t
	}
	return l.UTC()
}
