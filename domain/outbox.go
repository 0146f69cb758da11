package domain

import (
	"context"
	"time"
)

// Escalate escalates up to limit desk items left unassigned and unresolved
// past their card's escalate_after, and reports how many it escalated. Safe
// on every replica at once: each escalation is a compare-and-set.
func (l *Ledger) Escalate(ctx context.Context, limit int) (int, error) {
	after := map[string]time.Duration{}
	for _, c := range l.Cards {
		if c.EscalateAfter > 0 {
			after[c.Name] = c.EscalateAfter
		}
	}
	if len(after) == 0 {
		return 0, nil
	}
	ops, now, err := l.Store.EscalationDue(ctx, after, limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, op := range ops {
		card, err := l.Cards.Get(op.Type)
		if err != nil || !EscalationDue(op, card, now) {
			continue
		}
		ch, err := Decide(op, Escalate{}, l.env(ctx, card, System, now))
		if err != nil {
			continue
		}
		if err := l.Store.Apply(ctx, ch); ErrorCode(err) == EConflict {
			continue // assigned, resolved or escalated meanwhile
		} else if err != nil {
			return n, err
		}
		l.observe(ctx, ch)
		n++
	}
	return n, nil
}

// Notifications lists the operation's notifications and their attempts.
func (l *Ledger) Notifications(ctx context.Context, actor Actor, id string) ([]NotificationRecord, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	return l.Store.Notifications(ctx, id)
}

// NotificationDestinations lists every destination's delivery record.
func (l *Ledger) NotificationDestinations(ctx context.Context, actor Actor) ([]DestinationStats, error) {
	if err := requirePerson(actor, RoleAdmin); err != nil {
		return nil, err
	}
	return l.Store.NotificationDestinations(ctx)
}

// UndeliveredNotifications lists the latest notifications not delivered.
func (l *Ledger) UndeliveredNotifications(ctx context.Context, actor Actor, limit int) ([]NotificationRecord, error) {
	if err := requirePerson(actor, RoleAdmin); err != nil {
		return nil, err
	}
	return l.Store.UndeliveredNotifications(ctx, limit)
}

// ResendNotification sends a notification again, with the same id, and
// records who asked in the audit trail.
func (l *Ledger) ResendNotification(ctx context.Context, actor Actor, id, reason string) (NotificationRecord, error) {
	if err := requirePerson(actor, RoleAdmin); err != nil {
		return NotificationRecord{}, err
	}
	if errs := validReason("reason", reason); len(errs) > 0 {
		return NotificationRecord{}, Invalid(errs...)
	}
	now := l.Now()
	e := SystemEvent(ctx, l.IDs, now, actor, "notification_resent", reason, map[string]any{"notification_id": id})
	return l.Store.Resend(ctx, id, now, e)
}
