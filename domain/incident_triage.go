package domain

import (
	"context"
	"time"
	"unicode/utf8"
)

// Triage is what people do with an incident: acknowledge it (I am on it),
// name its owner, write notes, resolve or ignore it, reopen it. Each action
// is decided here, written by the store with the incident's timeline event
// and an audit event on the system stream in one transaction.
//
//	open ──acknowledge──▶ acknowledged
//	open, acknowledged ──resolve──▶ resolved    (also: its last item decided)
//	open, acknowledged ──ignore───▶ ignored
//	resolved, ignored ──reopen────▶ open        (resolved also: a new item)
//
// Owner and note are taken in any status. Operator and above triage; a
// viewer reads.

// TriageKind names a triage action.
type TriageKind string

// The triage actions.
const (
	TriageAcknowledge TriageKind = "acknowledge"
	TriageOwner       TriageKind = "owner"
	TriageNote        TriageKind = "note"
	TriageResolve     TriageKind = "resolve"
	TriageIgnore      TriageKind = "ignore"
	TriageReopen      TriageKind = "reopen"
)

// Triage is one triage action on an incident.
type Triage struct {
	Kind TriageKind
	// Text is the note, or the reason of a resolve, ignore or reopen
	// (required for those; optional for acknowledge).
	Text  string
	Owner Person // TriageOwner: the new owner; zero is nobody
	// ExpectedVersion is the incident's version the person saw: a triage
	// taken on an incident that changed since is refused (0: not checked).
	ExpectedVersion int64
}

// DecideTriage applies t to the incident, by actor at now: the incident as
// it will be and its timeline event (without IDs), or the refusal.
func DecideTriage(in Incident, t Triage, actor Actor, now time.Time) (Incident, IncidentEvent, error) {
	if err := requirePerson(actor, RoleOperator); err != nil {
		return in, IncidentEvent{}, err
	}
	if t.ExpectedVersion != 0 && t.ExpectedVersion != in.Version {
		return in, IncidentEvent{}, Errorf(EVersionConflict, "the incident changed since you loaded it (version %d, now %d): reload it", t.ExpectedVersion, in.Version)
	}
	if n := utf8.RuneCountInString(t.Text); n > MaxReason || !ValidText(t.Text) {
		return in, IncidentEvent{}, Invalid(FieldError{"text", "must be at most 2000 characters, without NUL"})
	}
	ev := IncidentEvent{IncidentID: in.ID, At: now, Actor: actor.Identity(), Text: t.Text}
	refuse := func(why string) (Incident, IncidentEvent, error) {
		return in, IncidentEvent{}, Errorf(EInvalidTransition, "the incident is %s: %s", in.Status, why)
	}
	needText := func() error {
		if t.Text == "" {
			return Invalid(FieldError{"text", "is required, 1-2000 characters"})
		}
		return nil
	}
	switch t.Kind {
	case TriageAcknowledge:
		if in.Status != IncidentOpen {
			return refuse("only an open incident is acknowledged")
		}
		in.Status, in.AcknowledgedBy, in.AcknowledgedAt = IncidentAcknowledged, actor.Identity(), ptr(now)
		ev.Action = IncidentActionAcknowledged
	case TriageOwner:
		if in.Owner.Issuer == t.Owner.Issuer && in.Owner.Subject == t.Owner.Subject && in.Owner.Identity() == t.Owner.Identity() {
			return refuse("that is its owner already")
		}
		in.Owner, ev.Action = t.Owner, IncidentActionOwner
		ev.Detail = "nobody"
		if t.Owner != (Person{}) {
			ev.Detail = t.Owner.Identity()
		}
	case TriageNote:
		if err := needText(); err != nil {
			return in, IncidentEvent{}, err
		}
		ev.Action = IncidentActionNote
	case TriageResolve, TriageIgnore:
		if err := needText(); err != nil {
			return in, IncidentEvent{}, err
		}
		if !in.Status.Active() {
			return refuse("reopen it first")
		}
		in.Status, ev.Action = IncidentResolved, IncidentActionResolved
		if t.Kind == TriageIgnore {
			in.Status, ev.Action = IncidentIgnored, IncidentActionIgnored
		}
		in.StatusBy, in.StatusAt = actor.Identity(), ptr(now)
	case TriageReopen:
		if err := needText(); err != nil {
			return in, IncidentEvent{}, err
		}
		if in.Status.Active() {
			return refuse("it is not resolved or ignored")
		}
		in.Status, in.AcknowledgedBy, in.AcknowledgedAt = IncidentOpen, "", nil
		in.StatusBy, in.StatusAt, ev.Action = actor.Identity(), ptr(now), IncidentActionReopened
		// Growth is announced again from here.
		in.NotifiedAt, in.NotifiedTotal = ptr(now), in.TotalItems
	default:
		return in, IncidentEvent{}, Invalid(FieldError{"action", "choose acknowledge, owner, note, resolve, ignore or reopen"})
	}
	in.Version++
	return in, ev, nil
}

// TriageIncident takes a triage action on the incident id and records it
// in the audit trail.
func (l *Incidents) TriageIncident(ctx context.Context, actor Actor, id string, t Triage) (Incident, error) {
	if err := requirePerson(actor, RoleOperator); err != nil {
		return Incident{}, err
	}
	if t.Kind == TriageOwner {
		// Someone Handoff knows who decides desk items, as the people
		// table names them now.
		p, err := assignee(ctx, l.store, actor, t.Owner)
		if err != nil {
			return Incident{}, err
		}
		t.Owner = Person{Issuer: p.Issuer, Subject: p.Subject, Email: p.Email, Name: p.Name}
	}
	in, err := l.store.TriageIncident(ctx, id, func(in Incident, now time.Time) (Incident, IncidentEvent, AuditEvent, error) {
		out, ev, err := DecideTriage(in, t, actor, now)
		if err != nil {
			return in, ev, AuditEvent{}, err
		}
		fields := map[string]any{"incident_id": in.ID, "type": in.Type, "error": in.Error.String(),
			"status": string(out.Status), "previous_status": string(in.Status), "owner": ev.Detail}
		audit := SystemEvent(ctx, l.IDs, now, actor, ev.Action, ev.Text, fields)
		ev.ID, ev.AuditID = l.IDs.New("iev"), audit.ID
		return out, ev, audit, nil
	})
	l.withProvider(&in)
	return in, err
}
