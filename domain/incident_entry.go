package domain

import (
	"fmt"
	"slices"
	"time"
)

// An item joins its incident in the transaction that puts it on the desk,
// and leaves it in the one that takes it off: the Decide of that change sets
// Change.IncidentEntry or IncidentExit (followUp), and the store, having
// read the incident in the same transaction, writes what IncidentJoined or
// IncidentItemLeft decide. Registers, claims and settles that stay off the
// desk carry neither and cost nothing more.
//
// The rules:
//   - The first item of a (type, error class, code) opens an incident and
//     announces it (incident.opened).
//   - A new item of a resolved incident reopens it and announces it again;
//     an ignored incident stays ignored — its counts grow, nobody is told —
//     until a person reopens it.
//   - Growth of an open or acknowledged incident is announced
//     (incident.grew, "12 more items"), coalesced: only once the incident
//     has doubled since the last notice, or IncidentNoticeQuiet after it.
//     A burst of 1,000 items makes about ten notices, a trickle at most
//     one per quiet period; each says how many came since the last.
//   - When the last open item is decided the incident resolves itself
//     ("all items decided"); an ignored one stays ignored.

// The incident notification types.
const (
	NotifyIncidentOpened = "incident.opened"
	NotifyIncidentGrew   = "incident.grew"
)

// IncidentNoticeQuiet is how long after an incident's last notice growth
// is announced however little it grew.
const IncidentNoticeQuiet = 10 * time.Minute

// The incident timeline's actions. Handoff's own are opened, reopened (by a
// new item) and resolved (its last item decided); people's are triage.go's.
const (
	IncidentActionOpened       = "incident_opened"
	IncidentActionReopened     = "incident_reopened"
	IncidentActionAcknowledged = "incident_acknowledged"
	IncidentActionOwner        = "incident_owner_set"
	IncidentActionNote         = "incident_noted"
	IncidentActionResolved     = "incident_resolved"
	IncidentActionIgnored      = "incident_ignored"
)

// IncidentEntry is, for a change that puts an operation on the desk, the
// incident it joins.
type IncidentEntry struct {
	IncidentKey
	NewID       string // the incident's ID, if this entry opens it
	EventID     string // the timeline event's ID, if it makes one
	OperationID string
	Namespace   string
	State       State // the state the item entered in
	Message     string
	At          time.Time
	// Notices are the notifications sent if the entry is announced, one
	// per destination of the type's card; IncidentJoined sets their type
	// and the incident they tell of.
	Notices []Notification
}

// IncidentExit is, for a change that takes an operation off the desk, the
// incident item it closes.
type IncidentExit struct {
	OperationID string
	// State is the state the item leaves: the one it entered in, since
	// any move out of that state is its exit.
	State   State
	EventID string // the timeline event's ID, if the incident resolves
	At      time.Time
}

// NotifiedIncident is the incident a notification tells of.
type NotifiedIncident struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	OpenItems  int    `json:"open_items"`
	TotalItems int    `json:"total_items"`
	NewItems   int    `json:"new_items"` // since the last notice (all of them on opening)
	Reopened   bool   `json:"reopened,omitempty"`
	// Headline is GrowthWords' "12 more items, 20 items in all": added as
	// the notice is sent (notify), never kept.
	Headline string `json:"headline,omitempty"`
	DeskPath string `json:"desk_path"`
}

// IncidentPath is an incident's page on the desk.
func IncidentPath(id string) string { return "/desk/incidents/" + id }

// incidentEntry builds the entry of an operation that moved onto the desk.
func incidentEntry(op Operation, action string, env Env) *IncidentEntry {
	e := &IncidentEntry{IncidentKey: IncidentKey{Type: op.Type}, NewID: env.NewID("inc"), EventID: env.NewID("iev"),
		OperationID: op.ID, Namespace: op.Namespace, State: op.State, At: env.Now}
	if le := op.LastError; le != nil {
		e.Error, e.Message = ErrorKind{Class: le.Class.String(), Code: le.Code}, le.Message
	}
	for _, n := range notificationsFor(op, "", action, "", env.Card.Destinations(), env) {
		// An incident is about many items: no one item's content or result.
		n.Summary.Content, n.Summary.ResultRef, n.Summary.ResultData = nil, "", nil
		e.Notices = append(e.Notices, n)
	}
	return e
}

// IncidentJoined decides what an item's entry does to its incident. prev
// is the incident as kept (found false: there is none yet); rejoin says
// the item was one of its items before (it left the desk and came back).
// It returns the incident to write, the notifications to send and the
// timeline event to add (nil for none).
func IncidentJoined(prev Incident, found, rejoin bool, e IncidentEntry) (Incident, []Notification, *IncidentEvent) {
	in := prev
	if !found {
		in = Incident{ID: e.NewID, IncidentKey: e.IncidentKey, FirstSeen: e.At, Status: IncidentOpen}
	}
	in.OpenItems++
	in.OpenIn = countOpen(in.OpenIn, e.State, 1)
	if !rejoin || !found {
		in.TotalItems++
	}
	in.LastSeen, in.Message = e.At, e.Message
	if !slices.Contains(in.Namespaces, e.Namespace) {
		in.Namespaces = append(slices.Clone(in.Namespaces), e.Namespace)
		slices.Sort(in.Namespaces)
	}
	var ev *IncidentEvent
	typ, newItems, reopened := "", 0, false
	switch {
	case !found:
		typ, newItems = NotifyIncidentOpened, in.TotalItems
		ev = &IncidentEvent{ID: e.EventID, IncidentID: in.ID, At: e.At, Action: IncidentActionOpened,
			Text: "the first item entered the desk"}
	case in.Status == IncidentResolved:
		in.Status, in.AcknowledgedBy, in.AcknowledgedAt = IncidentOpen, "", nil
		in.StatusBy, in.StatusAt = "", ptr(e.At)
		typ, newItems, reopened = NotifyIncidentOpened, max(in.TotalItems-in.NotifiedTotal, 1), true
		ev = &IncidentEvent{ID: e.EventID, IncidentID: in.ID, At: e.At, Action: IncidentActionReopened,
			Text: "a new item entered the desk"}
	case in.Status.Active() && GrowthDue(in, e.At):
		typ, newItems = NotifyIncidentGrew, in.TotalItems-in.NotifiedTotal
	}
	if typ == "" {
		return in, nil, ev
	}
	in.NotifiedAt, in.NotifiedTotal = ptr(e.At), in.TotalItems
	notes := make([]Notification, len(e.Notices))
	for i, n := range e.Notices {
		n.Type = typ
		n.Summary.DeskPath = IncidentPath(in.ID)
		n.Summary.Incident = &NotifiedIncident{ID: in.ID, Status: string(in.Status), OpenItems: in.OpenItems,
			TotalItems: in.TotalItems, NewItems: newItems, Reopened: reopened, DeskPath: IncidentPath(in.ID)}
		notes[i] = n
	}
	return in, taking(notes), ev
}

// GrowthDue reports whether an active incident's growth is announced now:
// it has items not yet announced, and either doubled since the last notice
// or the last notice is IncidentNoticeQuiet old.
func GrowthDue(in Incident, now time.Time) bool {
	grown := in.TotalItems - in.NotifiedTotal
	if grown <= 0 {
		return false
	}
	return in.NotifiedAt == nil || grown >= in.NotifiedTotal || !now.Before(in.NotifiedAt.Add(IncidentNoticeQuiet))
}

// IncidentItemLeft decides what an item's leaving the desk does to its
// incident: one open item fewer, and an active incident whose last item
// was decided resolves itself.
func IncidentItemLeft(in Incident, x IncidentExit) (Incident, *IncidentEvent) {
	in.OpenItems = max(in.OpenItems-1, 0)
	in.OpenIn = countOpen(in.OpenIn, x.State, -1)
	if in.OpenItems > 0 || !in.Status.Active() {
		return in, nil
	}
	in.Status, in.StatusBy, in.StatusAt = IncidentResolved, "", ptr(x.At)
	return in, &IncidentEvent{ID: x.EventID, IncidentID: in.ID, At: x.At, Action: IncidentActionResolved,
		Text: "all items decided"}
}

// countOpen returns a copy of open with state's count moved by d, never
// below 0, and without the states it counts none of.
func countOpen(open map[State]int, state State, d int) map[State]int {
	out := make(map[State]int, len(open)+1)
	for s, n := range open {
		out[s] = n
	}
	if n := out[state] + d; n > 0 {
		out[state] = n
	} else {
		delete(out, state)
	}
	return out
}

// GrowthWords is a notice's headline: "opened: 3 items", "12 more items".
func GrowthWords(n NotifiedIncident) string {
	items := func(k int) string {
		if k == 1 {
			return "1 item"
		}
		return fmt.Sprintf("%d items", k)
	}
	switch {
	case n.Reopened:
		return fmt.Sprintf("reopened by %d new %s; %d open", n.NewItems, map[bool]string{true: "item", false: "items"}[n.NewItems == 1], n.OpenItems)
	case n.NewItems == n.TotalItems:
		return "opened: " + items(n.TotalItems)
	}
	return fmt.Sprintf("%d more %s, %s in all", n.NewItems, map[bool]string{true: "item", false: "items"}[n.NewItems == 1], items(n.TotalItems))
}
