package domain

import (
	"context"
	"time"
)

// Outbox holds the notifications' use cases: escalating what waited too
// long (which queues its notices), and what people see and do about
// deliveries. Delivery itself is reconcile.Deliverer, on OutboxStore.
type Outbox struct {
	*core
	store OutboxStorage
}

// OutboxStorage is the store methods the Outbox calls; their contracts are
// Store's and OutboxStore's. The store package implements it.
type OutboxStorage interface {
	Apply(ctx context.Context, ch Change) error
	EscalationDue(ctx context.Context, after map[string]time.Duration, limit int) ([]Operation, time.Time, error)
	Notifications(ctx context.Context, operationID string) ([]NotificationRecord, error)
	UndeliveredNotifications(ctx context.Context, limit int) ([]NotificationRecord, error)
	NotificationDestinations(ctx context.Context) ([]DestinationStats, error)
	Resend(ctx context.Context, id string, now time.Time, e AuditEvent) (NotificationRecord, error)
}

// NewOutbox builds the notifications' use cases on s with the real clock.
func NewOutbox(s OutboxStorage, cards Cards) *Outbox { return newOutbox(newCore(nil, cards), s) }

func newOutbox(c *core, s OutboxStorage) *Outbox { return &Outbox{core: c, store: s} }

// Escalate escalates up to limit desk items left unassigned and unresolved
// past their card's escalate_after, and reports how many it escalated. Safe
// on every replica at once: each escalation is a compare-and-set.
func (l *Outbox) Escalate(ctx context.Context, limit int) (int, error) {
	after := map[string]time.Duration{}
	for _, c := range l.Cards {
		if c.EscalateAfter > 0 {
			after[c.Name] = c.EscalateAfter
		}
	}
	if len(after) == 0 {
		return 0, nil
	}
	ops, now, err := l.store.EscalationDue(ctx, after, limit)
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
		if err := l.store.Apply(ctx, ch); ErrorCode(err) == EConflict {
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
func (l *Outbox) Notifications(ctx context.Context, actor Actor, id string) ([]NotificationRecord, error) {
	if err := requirePerson(actor, RoleViewer); err != nil {
		return nil, err
	}
	return l.store.Notifications(ctx, id)
}

// NotificationDestinations lists every destination's delivery record.
func (l *Outbox) NotificationDestinations(ctx context.Context, actor Actor) ([]DestinationStats, error) {
	if err := requirePerson(actor, RoleAdmin); err != nil {
		return nil, err
	}
	return l.store.NotificationDestinations(ctx)
}

// UndeliveredNotifications lists the latest notifications not delivered.
func (l *Outbox) UndeliveredNotifications(ctx context.Context, actor Actor, limit int) ([]NotificationRecord, error) {
	if err := requirePerson(actor, RoleAdmin); err != nil {
		return nil, err
	}
	return l.store.UndeliveredNotifications(ctx, limit)
}

// ResendNotification sends a notification again, with the same id, and
// records who asked in the audit trail.
func (l *Outbox) ResendNotification(ctx context.Context, actor Actor, id, reason string) (NotificationRecord, error) {
	if err := requirePerson(actor, RoleAdmin); err != nil {
		return NotificationRecord{}, err
	}
	if errs := validReason("reason", reason); len(errs) > 0 {
		return NotificationRecord{}, Invalid(errs...)
	}
	now := l.Now()
	e := SystemEvent(ctx, l.IDs, now, actor, "notification_resent", reason, map[string]any{"notification_id": id})
	return l.store.Resend(ctx, id, now, e)
}
