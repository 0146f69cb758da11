package domain

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"time"
)

// The notification types: what a receiver is told happened to an operation.
const (
	NotifyHandedOff         = "operation.handed_off"
	NotifyApprovalRequested = "operation.approval_requested"
	NotifyEscalated         = "operation.escalated"
	NotifyResolved          = "operation.resolved"
)

// The destination formats.
const (
	FormatStandard = "standard" // Standard Webhooks JSON
	FormatSlack    = "slack"    // a Slack incoming webhook's Block Kit message
)

// DefaultNotifySecretEnv names the variable holding the secret of the
// default destination and of the notify_url shorthand.
const DefaultNotifySecretEnv = "HANDOFF_NOTIFY_SECRET"

// Destination is where notifications of an operation type go. The secret is
// never on the card: SecretEnv names the variable that holds it.
type Destination struct {
	URL       string
	SecretEnv string
	Format    string
	// Unsigned says the destination is meant to get unsigned deliveries
	// (unsigned: true): without it a standard destination must have a
	// secret, or Handoff does not start.
	Unsigned bool
	// SeesHiddenContent says the receiver may read content the card keeps
	// from viewers (content_visible_to), which notify_include_data sends.
	SeesHiddenContent bool
	// Events are the kinds of notification it takes, comma-separated
	// (notification_route.go); "": its format's default. A string keeps
	// destinations comparable.
	Events string
}

// MustSign reports whether deliveries to d must carry a signature: every
// standard destination unless it says unsigned. A Slack incoming webhook
// authenticates Handoff by its secret URL and reads no signature.
func (d Destination) MustSign() bool { return d.Format == FormatStandard && !d.Unsigned }

// AllDestinations are the card's destinations and its escalation's.
func (c Card) AllDestinations() []Destination {
	return append(slices.Clone(c.Destinations()), c.Escalate...)
}

// SendsUnsigned reports whether a card says deliveries to url go unsigned,
// for the desk to mark the destination.
func (cs Cards) SendsUnsigned(url string) bool {
	for _, c := range cs {
		for _, d := range c.AllDestinations() {
			if d.URL == url && d.Unsigned {
				return true
			}
		}
	}
	return false
}

// Notification is one message due to one destination, decided by the
// transition that made it due and written in the same transaction: the
// outbox. Its ID is the webhook-id every delivery attempt carries.
type Notification struct {
	ID          string
	OperationID string
	Namespace   string
	OpType      string
	Type        string
	Destination Destination
	// Summary is the operation as the receiver sees it, frozen at the
	// transition.
	Summary NotificationSummary
	// Unreadable is set by a store that could not read Summary back; the
	// notification cannot be delivered.
	Unreadable error
	CreatedAt  time.Time
}

// NotificationSummary is what a notification says about its operation,
// frozen at the transition. Content and result data appear only when the
// card opts in: they can hold personal data. The notify package renders it
// on the wire; the store keeps it in the outbox as this JSON, whose
// members are those rows already written carry, so every stored
// notification reads back.
type NotificationSummary struct {
	ID          string         `json:"id"`
	Key         string         `json:"key"`
	Type        string         `json:"type"`
	Namespace   string         `json:"namespace"`
	State       string         `json:"state"`
	Reason      string         `json:"reason"`
	LastError   *NotifiedError `json:"last_error"`
	Attempts    int            `json:"attempts"`
	Provider    string         `json:"provider"`
	ProviderKey string         `json:"provider_key"`
	AgeSeconds  int64          `json:"age_seconds"`
	// EnteredDeskAt is when the operation last came to wait on a person.
	EnteredDeskAt *time.Time `json:"entered_desk_at,omitempty"`
	Assignee      string     `json:"assignee"`
	DeskPath      string     `json:"desk_path"`
	// DeskURL is DeskPath under the public base URL, when there is one:
	// added as the notification is sent (notify), never kept.
	DeskURL    string          `json:"desk_url,omitempty"`
	Decision   string          `json:"decision,omitempty"`
	DecidedBy  string          `json:"decided_by,omitempty"`
	Content    json.RawMessage `json:"content,omitempty"`
	ResultRef  string          `json:"result_ref,omitempty"`
	ResultData json.RawMessage `json:"result_data,omitempty"`
	// Incident is, for an incident's notice, the incident it tells of.
	Incident *NotifiedIncident `json:"incident,omitempty"`
}

// NotifiedError is the last error as a notification carries it.
type NotifiedError struct {
	Class   string `json:"class"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// inDeskOrApproval is where an operation waits on a person.
func inDeskOrApproval(s State) bool { return s.InDesk() || s == AwaitingApproval }

// DeskReason is why an operation is waiting on a person: the error code that
// put it there, or the step that did.
func DeskReason(op Operation, action string) string {
	switch {
	case op.State == AwaitingApproval && heldForSecondExecution(op):
		return op.LastError.Code
	case op.State == AwaitingApproval && op.ContentVersion > 1 && op.ContentAuthor != "":
		return "revised"
	case op.State == AwaitingApproval:
		return "requires_approval"
	case op.LastError != nil && op.LastError.Code != "":
		return op.LastError.Code
	}
	return action
}

// followUp adds to a decided change what waiting on a person implies: the
// desk clock (entered, assigned, escalated) and the notifications the change
// makes due. before is the operation the decision was taken on.
func followUp(before Operation, ch *Change, env Env) {
	n := &ch.Op
	action := ""
	if len(ch.Events) > 0 {
		action = ch.Events[len(ch.Events)-1].Action
	}
	wasIn, isIn := inDeskOrApproval(before.State) && !before.State.IsZero(), inDeskOrApproval(n.State)
	moved := before.State != n.State
	// An operation awaiting Handoff's own lookup has not been handed off:
	// entering unknown_outcome on a card with an adapter starts no desk
	// clock and announces nothing; the lookup's inconclusive end does both.
	pending := AwaitingLookup(before, env.Card)
	if pending {
		wasIn = false
		moved = moved || action == ActionLookupInconclusive
	}
	if moved && isIn && deferToLookup(before, *n, env) {
		n.DeskEnteredAt, n.AssignedAt, n.EscalatedAt = nil, nil, nil
		isIn = false
	}
	if wasIn && moved && env.Actor.Kind == ActorPerson {
		decision := action
		if n.Resolution != nil {
			decision = n.Resolution.Action
		}
		ch.Notifications = append(ch.Notifications, notificationsFor(*n, NotifyResolved, action, decision, env.Card.Destinations(), env)...)
	}
	if wasIn && moved {
		ch.LeftDesk = &DeskClock{EnteredAt: before.DeskEnteredAt, AssignedAt: before.AssignedAt,
			ByPerson: env.Actor.Kind == ActorPerson, Decision: action}
		if n.Resolution != nil && env.Actor.Kind == ActorPerson {
			ch.LeftDesk.Decision = n.Resolution.Action
		}
		// DeskEnteredAt stays: with the resolution's time it tells how long
		// the last desk stay took.
		n.AssignedAt, n.EscalatedAt = nil, nil
	}
	if isIn && moved {
		ch.DeskEntry = DeskReason(*n, action)
		n.DeskEnteredAt, n.EscalatedAt = ptr(env.Now), nil
		if n.Assignee != "" {
			n.AssignedAt = ptr(env.Now)
		}
		typ := NotifyHandedOff
		if n.State == AwaitingApproval {
			typ = NotifyApprovalRequested
		}
		ch.Notifications = append(ch.Notifications, notificationsFor(*n, typ, action, "", env.Card.Destinations(), env)...)
	}
	// Incidents (incident_entry.go): only unknown_outcome and
	// failed_terminal items, and never a drill's. Any move out of those
	// states closes the item's membership, if it has one — also that of an
	// item awaiting Handoff's own lookup, which migration 00019 may have
	// put in an incident.
	if moved && before.State.InDesk() {
		ch.IncidentExit = &IncidentExit{OperationID: n.ID, State: before.State, EventID: env.NewID("iev"), At: env.Now}
	}
	if isIn && moved && n.State.InDesk() && n.Namespace != DrillNamespace {
		ch.IncidentEntry = incidentEntry(*n, action, env)
	}
	if isIn && !moved && (n.Assignee != before.Assignee || n.AssigneeIssuer != before.AssigneeIssuer || n.AssigneeSubject != before.AssigneeSubject) {
		n.AssignedAt = nil
		if n.Assignee != "" {
			n.AssignedAt = ptr(env.Now)
		}
	}
}

// notificationsFor makes one notification of the operation per destination;
// none for a drill's operation (DrillNamespace).
func notificationsFor(op Operation, typ, action, decision string, dests []Destination, env Env) []Notification {
	if len(dests) == 0 || op.Namespace == DrillNamespace {
		return nil
	}
	s := NotificationSummary{ID: op.ID, Key: op.Key, Type: op.Type, Namespace: op.Namespace, State: op.State.String(),
		Reason: DeskReason(op, action), Attempts: op.Attempts, Provider: env.Card.Provider, ProviderKey: op.ProviderKey,
		AgeSeconds: int64(math.Max(0, env.Now.Sub(op.CreatedAt).Seconds())), Assignee: op.Assignee,
		DeskPath: DeskPath(op.ID), Decision: decision}
	if op.DeskEnteredAt != nil {
		s.EnteredDeskAt = ptr(op.DeskEnteredAt.UTC())
	}
	if typ == NotifyResolved {
		s.Reason = decision
		if op.Resolution != nil {
			s.DecidedBy = op.Resolution.By
		} else {
			s.DecidedBy = env.Actor.Identity()
		}
	}
	if e := op.LastError; e != nil {
		s.LastError = &NotifiedError{Class: e.Class.String(), Code: e.Code, Message: e.Message}
	}
	if env.Card.NotifyIncludeData {
		s.Content = op.Content
		if op.Result != nil {
			s.ResultRef, s.ResultData = op.Result.Ref, op.Result.Data
		}
	}
	out := make([]Notification, 0, len(dests))
	for _, d := range dests {
		if typ != "" && !d.Takes(typ) {
			continue // an incident's notices are routed once their kind is known (IncidentJoined)
		}
		out = append(out, Notification{ID: env.NewID("msg"), OperationID: op.ID, Namespace: op.Namespace, OpType: op.Type,
			Type: typ, Destination: d, Summary: s, CreatedAt: env.Now})
	}
	return out
}

// Destinations is where the card's notifications go: its notify list, or
// the notify_url shorthand.
func (c Card) Destinations() []Destination {
	if len(c.Notify) > 0 {
		return c.Notify
	}
	if c.NotifyURL != "" {
		return []Destination{{URL: c.NotifyURL, SecretEnv: DefaultNotifySecretEnv, Format: FormatStandard}}
	}
	return nil
}

// WithDefaultNotify gives every card without destinations of its own the
// default destination (HANDOFF_NOTIFY_URL). An empty url changes nothing.
func (cs Cards) WithDefaultNotify(url string) Cards {
	return cs.WithDefaultDestination(Destination{URL: url, SecretEnv: DefaultNotifySecretEnv, Format: FormatStandard})
}

// WithDefaultDestination is WithDefaultNotify with the destination spelled
// out (an unsigned default, HANDOFF_NOTIFY_UNSIGNED).
func (cs Cards) WithDefaultDestination(d Destination) Cards {
	if d.URL == "" {
		return cs
	}
	out := make(Cards, len(cs))
	for name, c := range cs {
		if len(c.Destinations()) == 0 {
			c.Notify = []Destination{d}
		}
		out[name] = c
	}
	return out
}

// Escalate is the system's reaction to a desk item left unassigned and
// unresolved for longer than the card's escalate_after.
type Escalate struct{}

func (Escalate) name() string { return "escalate" }

// EscalationDue reports whether op has waited unassigned past the card's
// escalate_after at now and was not escalated yet.
func EscalationDue(op Operation, card Card, now time.Time) bool {
	return card.EscalateAfter > 0 && inDeskOrApproval(op.State) && op.Assignee == "" && op.EscalatedAt == nil &&
		op.DeskEnteredAt != nil && !now.Before(op.DeskEnteredAt.Add(card.EscalateAfter))
}

func decideEscalate(op Operation, env Env) (Change, error) {
	if !EscalationDue(op, env.Card, env.Now) {
		return Change{}, Errorf(EInvalidTransition, "no escalation is due")
	}
	ch := begin(op, env, op.State, "escalated")
	ch.Op.EscalatedAt = ptr(env.Now)
	ch.Events[0].Detail = detail(map[string]any{"escalate_after": env.Card.EscalateAfter.String(),
		"desk_entered_at": op.DeskEnteredAt})
	dests := env.Card.Escalate
	if len(dests) == 0 || op.Namespace == DrillNamespace {
		dests = env.Card.Destinations()
	}
	ch.Notifications = notificationsFor(ch.Op, NotifyEscalated, DeskReason(op, "escalated"), "", dests, env)
	return ch, nil
}

// Delivery outcomes of one attempt.
const (
	DeliveryDelivered = "delivered"
	DeliveryRetry     = "retry"
	DeliveryFailed    = "failed"
)

// DeliveryResult is what one delivery attempt saw.
type DeliveryResult struct {
	StatusCode int           // 0: no answer
	Latency    time.Duration // from connect to the end of the answer
	Response   string        // the first 1 KB of the answer
	Err        string        // a connection error, timeout or refused destination
	Refused    bool          // the destination may never be called (SSRF guard, bad URL)
	RetryAfter time.Duration // the answer's Retry-After, if any
}

// DeliveryPolicy bounds delivery retries.
type DeliveryPolicy struct {
	Base   time.Duration // the first retry's upper bound
	Max    time.Duration // no retry waits longer
	MaxAge time.Duration // after this long since the notification, give up
}

// DefaultDeliveryPolicy retries for a day.
var DefaultDeliveryPolicy = DeliveryPolicy{Base: 5 * time.Second, Max: time.Hour, MaxAge: 24 * time.Hour}

// JudgeDelivery decides what follows attempt number n of a notification
// made at created: delivered, retried at next, or failed for good. 5xx,
// 429 and no answer at all are retried with exponential backoff and full
// jitter (a 429's Retry-After is waited out); other answers are permanent.
func JudgeDelivery(r DeliveryResult, n int, created, now time.Time, p DeliveryPolicy, jitter func() float64) (outcome string, next time.Time) {
	switch {
	case r.StatusCode >= 200 && r.StatusCode < 300:
		return DeliveryDelivered, time.Time{}
	case r.Refused:
		return DeliveryFailed, time.Time{}
	case r.StatusCode == 0, r.StatusCode == 429, r.StatusCode >= 500:
	default:
		return DeliveryFailed, time.Time{}
	}
	n = max(n, 1)
	ceiling := p.Max
	if n < 40 {
		ceiling = min(p.Max, p.Base*time.Duration(1<<(n-1)))
	}
	wait := time.Duration(jitter() * float64(ceiling))
	if r.RetryAfter > wait {
		wait = r.RetryAfter
	}
	next = now.Add(wait)
	if p.MaxAge > 0 && next.After(created.Add(p.MaxAge)) {
		return DeliveryFailed, time.Time{}
	}
	return DeliveryRetry, next
}

// The statuses of an outbox row.
const (
	NotificationPending   = "pending"
	NotificationDelivered = "delivered"
	NotificationFailed    = "failed"
)

// NotificationRecord is an outbox row: the notification and how its
// delivery stands.
type NotificationRecord struct {
	Notification
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	ClaimToken    int64 // the claim this copy was read under
	DeliveredAt   *time.Time
	LastStatus    int
	LastError     string
	History       []DeliveryAttempt // filled by reads that list attempts
}

// DeliveryAttempt is one try at delivering a notification.
type DeliveryAttempt struct {
	NotificationID string
	Number         int
	At             time.Time
	StatusCode     int
	Latency        time.Duration
	Response       string
	Error          string
	Outcome        string
}

// DeliveryRecord is what a delivery attempt writes back: the attempt, and
// the row's new status and next attempt, only if the claim is still ours.
type DeliveryRecord struct {
	ID         string
	ClaimToken int64
	Attempt    DeliveryAttempt
	Status     string
	Next       time.Time
}

// DestinationStats is one destination's delivery record.
type DestinationStats struct {
	URL            string
	Format         string
	Notifications  int
	Delivered      int
	Failed         int
	Pending        int
	Attempts       int
	FailedAttempts int
	LastError      string
	LastErrorAt    *time.Time
}

// FailureRate is the share of attempts that did not deliver.
func (d DestinationStats) FailureRate() float64 {
	if d.Attempts == 0 {
		return 0
	}
	return float64(d.FailedAttempts) / float64(d.Attempts)
}

// DeskGauge counts the operations waiting on a person of one namespace, type
// and state, with the oldest one's desk entry.
type DeskGauge struct {
	Namespace string
	Type      string
	State     State
	Items     int
	Oldest    time.Time
}

// OutboxStore is what notifications, escalation and the recovery gauges
// need from persistence. The store package implements it; the Ledger and
// the delivery loop find it on their Store.
type OutboxStore interface {
	// EscalationDue lists operations waiting on a person, unassigned and
	// not escalated, whose desk entry is older than their type's delay in
	// after, and the database's clock.
	EscalationDue(ctx context.Context, after map[string]time.Duration, limit int) ([]Operation, time.Time, error)
	// ClaimNotifications takes up to limit pending notifications due at
	// now, at most perURL of one destination, skipping rows other replicas
	// hold and destinations in skip, and
	// pushes their next attempt to now+lease: a crashed sender's rows come
	// back once the lease passes.
	ClaimNotifications(ctx context.Context, now time.Time, lease time.Duration, limit, perURL int, skip []string) ([]NotificationRecord, error)
	// RecordDelivery writes an attempt and the row's new status, unless
	// another claim took the row meanwhile (then it reports false).
	RecordDelivery(ctx context.Context, r DeliveryRecord) (bool, error)
	// Notifications lists an operation's notifications with their attempts.
	Notifications(ctx context.Context, operationID string) ([]NotificationRecord, error)
	// UndeliveredNotifications lists the latest notifications that failed
	// for good or are still being retried, newest first.
	UndeliveredNotifications(ctx context.Context, limit int) ([]NotificationRecord, error)
	// NotificationDestinations summarises deliveries per destination URL.
	NotificationDestinations(ctx context.Context) ([]DestinationStats, error)
	// Resend makes a notification pending again, due at now, and records
	// who asked in the system audit stream.
	Resend(ctx context.Context, id string, now time.Time, e AuditEvent) (NotificationRecord, error)
	// DeskGauges counts what waits on a person, by namespace, type and
	// state, in one query, and returns the store's clock.
	DeskGauges(ctx context.Context) ([]DeskGauge, time.Time, error)
	// OutboxBacklog counts the notifications not yet delivered or given up
	// on, and the oldest one's creation (zero when there is none).
	OutboxBacklog(ctx context.Context) (int, time.Time, error)
}

// AssigneeLoad counts the desk items one person holds; "" is nobody.
type AssigneeLoad struct {
	Assignee string
	Items    int
}

// Percentile is the p-th percentile (0-1) of sorted durations, nearest rank.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}
