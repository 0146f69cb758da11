package domain

import (
	"slices"
	"strings"
)

// Each destination takes the kinds of notification it lists (events:
// [incident.*, operation.escalated]); a pattern "group.*" takes every kind
// of the group, "*" every kind. Without a list the format decides: a
// Slack channel is read by people, who are paged once per incident — its
// notices, escalations and resolutions — never once per item of an
// outage; a standard (machine) destination takes every kind.

// NotifyKinds are every kind of notification, in the order the desk lists
// them.
var NotifyKinds = []string{NotifyHandedOff, NotifyApprovalRequested, NotifyEscalated, NotifyResolved,
	NotifyIncidentOpened, NotifyIncidentGrew}

// SlackDefaultKinds are what a Slack destination takes when it lists none.
// Approval requests are not part of any incident: without them an
// approval would never be announced to people.
var SlackDefaultKinds = []string{"incident.*", NotifyEscalated, NotifyResolved, NotifyApprovalRequested}

// Kinds are the kinds of notification d takes, as configured or by its
// format's default.
func (d Destination) Kinds() []string {
	switch {
	case d.Events != "":
		return strings.Split(d.Events, ",")
	case d.Format == FormatSlack:
		return SlackDefaultKinds
	}
	return []string{"*"}
}

// Takes reports whether d takes notifications of kind typ.
func (d Destination) Takes(typ string) bool {
	return slices.ContainsFunc(d.Kinds(), func(p string) bool { return kindMatches(p, typ) })
}

func kindMatches(pattern, typ string) bool {
	if group, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(typ, group) && (group == "" || strings.HasSuffix(group, "."))
	}
	return pattern == typ
}

// validKind reports whether an events entry names a kind, a group of them
// or all of them.
func validKind(p string) bool {
	if p == "*" {
		return true
	}
	if group, ok := strings.CutSuffix(p, ".*"); ok {
		return slices.ContainsFunc(NotifyKinds, func(k string) bool { return strings.HasPrefix(k, group+".") })
	}
	return slices.Contains(NotifyKinds, p)
}

// taking keeps the notifications whose destination takes their kind.
func taking(ns []Notification) []Notification {
	return slices.DeleteFunc(ns, func(n Notification) bool { return !n.Destination.Takes(n.Type) })
}

// KindsOf are the kinds of notification the cards send to url, as the
// desk lists them: each destination with that URL adds its own.
func (cs Cards) KindsOf(url string) []string {
	var out []string
	for _, c := range cs.Sorted() {
		for _, d := range c.AllDestinations() {
			if d.URL != url {
				continue
			}
			for _, k := range d.Kinds() {
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	return out
}
