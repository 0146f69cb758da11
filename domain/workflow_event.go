package domain

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
)

// EventRegistration is a workflow's report of an incoming event.
type EventRegistration struct {
	EventID       string
	Source        string
	CorrelationID string
	Actions       []EventAction
}

// EventResult is the event with one operation per action.
type EventResult struct {
	Event      Event
	Created    bool
	Operations []Operation
}

// RegisterEvent records an event and registers one operation per action. A
// redelivery returns the same operations; one with other actions is refused.
func (l *Workflow) RegisterEvent(ctx context.Context, actor Actor, r EventRegistration) (EventResult, error) {
	if err := requireWorkflow(actor); err != nil {
		return EventResult{}, err
	}
	regs, fp, err := l.eventRegistrations(actor, r)
	if err != nil {
		return EventResult{}, err
	}
	ev, created, err := l.store.SaveEvent(ctx, Event{Namespace: actor.Namespace, EventID: r.EventID, Source: r.Source,
		CorrelationID: r.CorrelationID, Fingerprint: fp, Actions: r.Actions, ReceivedAt: l.Now().UTC()})
	if err != nil {
		return EventResult{}, err
	}
	if ev.Fingerprint != fp {
		return EventResult{}, Errorf(EFingerprint, "event %q was delivered before with different actions", r.EventID)
	}
	if created && l.Events != nil {
		l.Events.ObserveEvent(ev)
	}
	// Each registration is idempotent, so a redelivery after a crash midway
	// registers whatever the first delivery did not.
	res := EventResult{Event: ev, Created: created}
	for _, reg := range regs {
		rr, err := l.Register(ctx, actor, reg)
		if err != nil {
			return EventResult{}, err
		}
		res.Operations = append(res.Operations, rr.Operation)
	}
	return res, nil
}

func (l *Workflow) eventRegistrations(actor Actor, r EventRegistration) ([]Registration, string, error) {
	var errs []FieldError
	if !ValidKey(r.EventID) {
		errs = append(errs, FieldError{"event_id", "must be 1-255 characters from A-Z a-z 0-9 . _ : / @ + = -"})
	}
	if len(r.Actions) == 0 || len(r.Actions) > 50 {
		errs = append(errs, FieldError{"actions", "must list 1-50 actions"})
	}
	var regs []Registration
	var canon []map[string]any
	seen := map[string]bool{}
	for i, a := range r.Actions {
		f := "actions[" + itoa(i) + "]."
		if seen[a.Action] {
			errs = append(errs, FieldError{f + "action", "is listed twice"})
		}
		seen[a.Action] = true
		reg := Registration{Namespace: actor.Namespace, Key: ActionKey(r.EventID, a.Action), Type: a.Type,
			Content: a.Content, EventID: r.EventID, Source: r.Source, CorrelationID: r.CorrelationID}
		for _, fe := range reg.Validate() {
			if fe.Field == "key" {
				fe.Field, fe.Message = "action", "event_id:action must be a valid key of at most 255 characters"
			}
			if fe.Field != "event_id" {
				errs = append(errs, FieldError{f + fe.Field, fe.Message})
			}
		}
		content, err := CanonicalObject(a.Content)
		if err != nil && len(a.Content) > 0 {
			errs = append(errs, contentError(f+"content", err))
		} else if len(content) > MaxContentBytes {
			// Checked before the event is saved, so a refused action never
			// leaves an event recorded without its operations.
			return nil, "", Errorf(ETooLarge, "%scontent is %d bytes; the limit is %d", f, len(content), MaxContentBytes)
		}
		card, err := l.Cards.Get(a.Type)
		if err != nil && a.Type != "" {
			return nil, "", err
		}
		errs = append(errs, eventIdentifierErrors(f, i, l.identifierRules(reg, card))...)
		regs = append(regs, reg)
		canon = append(canon, map[string]any{"action": a.Action, "type": a.Type, "content": json.RawMessage(content)})
	}
	if len(errs) > 0 {
		return nil, "", Invalid(errs...)
	}
	raw, _ := json.Marshal(canon)
	c, err := Canonicalize(raw)
	if err != nil {
		return nil, "", Invalid(FieldError{"actions", err.Error()})
	}
	return regs, "sha256:" + SHA256Hex(c), nil
}

// GetEvent returns the event with each action's current operation.
func (l *Workflow) GetEvent(ctx context.Context, actor Actor, eventID string) (EventResult, error) {
	if err := checkID(eventID, "event"); err != nil {
		return EventResult{}, err
	}
	ev, err := l.store.GetEvent(ctx, scope(actor), eventID)
	if err != nil {
		return EventResult{}, err
	}
	res := EventResult{Event: ev}
	for i, a := range ev.Actions {
		if card, err := l.Cards.Get(a.Type); err == nil && !card.MayReadContent(actor) {
			res.Event.Actions[i].Content = json.RawMessage("null")
		}
	}
	for _, a := range ev.Actions {
		op, _, err := l.store.LoadByKey(ctx, ev.Namespace, ActionKey(ev.EventID, a.Action))
		if ErrorCode(err) == ENotFound {
			continue // the delivery that recorded the event did not get this far
		} else if err != nil {
			return EventResult{}, err
		}
		l.hideContent(actor, &op)
		res.Operations = append(res.Operations, op)
	}
	return res, nil
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// eventIdentifierErrors names the identifier problems of action i (field
// prefix f) as the event's body has them: the event's own identifiers once,
// at the top; the action's key as its action, unless the event ID alone is
// what makes it personal.
func eventIdentifierErrors(f string, i int, errs []FieldError) []FieldError {
	var out []FieldError
	eventID := slices.ContainsFunc(errs, func(e FieldError) bool { return e.Field == "event_id" })
	for _, fe := range errs {
		switch {
		case fe.Field == "key" && !(eventID && strings.Contains(fe.Message, "personal data")):
			out = append(out, FieldError{f + "action", fe.Message})
		case (fe.Field == "event_id" || fe.Field == "correlation_id") && i == 0:
			out = append(out, fe)
		}
	}
	return out
}
