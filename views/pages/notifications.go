package pages

import (
	"time"

	"github.com/opshandoff/handoff/views/layouts"
)

// NotificationRow is one notification of an operation and its attempts.
type NotificationRow struct {
	ID, Type, URL, Format, Status, LastError string
	OperationID                              string
	CreatedAt                                time.Time
	DeliveredAt                              *time.Time
	NextAttemptAt                            *time.Time // while pending
	Attempts                                 []NotificationAttemptRow
	CanResend                                bool
}

// NotificationAttemptRow is one delivery attempt.
type NotificationAttemptRow struct {
	Number     int
	At         time.Time
	StatusCode string
	Latency    string
	Outcome    string
	Answer     string // the error, or the first 1 KB of the answer
}

// DestinationRow is one destination's record.
type DestinationRow struct {
	URL, Format, FailureRate, LastError                  string
	LastErrorAt                                          *time.Time
	Notifications, Delivered, Failed, Pending, AttemptsN int
	Unsigned                                             bool // a card says its deliveries go unsigned
	// Kinds are the kinds of notification the cards send it ("*": all).
	Kinds string
}

// NotificationsView is the admin page of destinations and undelivered
// notifications.
type NotificationsView struct {
	Frame        layouts.Frame
	Destinations []DestinationRow
	// Unsigned are the destinations the cards send to unsigned, as
	// "URL (type)", whether or not anything was sent to them yet.
	Unsigned    []string
	Undelivered []NotificationRow
	Problem     Problem
	Resent      string // the id just sent again
}

// attemptParts are an attempt's status, latency and outcome, the empty
// ones left out, so the line reads "#1 · 12:00 · HTTP 200 · 35 ms · delivered".
func attemptParts(a NotificationAttemptRow) []string {
	var out []string
	for _, s := range []string{a.StatusCode, a.Latency, a.Outcome} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
