package domain

import (
	"encoding/json"
	"time"
)

// Event is an incoming trigger, such as a webhook delivery; each of its
// actions becomes an operation keyed "<event_id>:<action>".
type Event struct {
	Namespace     string
	EventID       string
	Source        string
	CorrelationID string
	Fingerprint   string // over the canonical actions
	Actions       []EventAction
	ReceivedAt    time.Time
}

// EventAction is one side effect an event asks for.
type EventAction struct {
	Action  string
	Type    string
	Content json.RawMessage
}

// ActionKey is the operation key of an event's action.
func ActionKey(eventID, action string) string { return eventID + ":" + action }
