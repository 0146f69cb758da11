package domain

import (
	"context"
	"encoding/json"
	"time"
)

// Workflow holds the use cases of the worker protocol: what a workflow's
// token calls — register, claim, begin, settle, heartbeat, reconcile,
// events — and its reads of the operations it may see.
type Workflow struct {
	*core
	store WorkflowStorage
	// MaxCausationDepth bounds a caused_by chain (LoopDetected).
	MaxCausationDepth int
	// KeyPII is what a key, event ID or correlation ID holding personal
	// data gets; the zero value refuses.
	KeyPII PIIGuard
	// Events, if set, is told of every event received for the first time
	// (a redelivery is not counted again).
	Events EventObserver
}

// WorkflowStorage is the store methods the Workflow calls; their contracts
// are Store's. The store package implements it.
type WorkflowStorage interface {
	coreStorage
	Create(ctx context.Context, ch Change) (op Operation, created bool, err error)
	LoadByKey(ctx context.Context, namespace, key string) (Operation, time.Time, error)
	Twin(ctx context.Context, namespace, identity, key string) (Operation, bool, error)
	CompletedTwin(ctx context.Context, namespace, identity string, since time.Time) (Operation, bool, error)
	ClaimReady(ctx context.Context, q ReadyQuery, decide func(Operation, time.Time) (Change, error)) ([]Change, error)
	List(ctx context.Context, q ListQuery) ([]Operation, string, error)
	Attempts(ctx context.Context, operationID string) ([]Attempt, error)
	SettledAttempt(ctx context.Context, operationID string, leaseToken int64) (a Attempt, found bool, err error)
	ContentVersions(ctx context.Context, operationID string) ([]ContentVersion, error)
	SaveEvent(ctx context.Context, e Event) (Event, bool, error)
	GetEvent(ctx context.Context, namespace, eventID string) (Event, error)
}

// NewWorkflow builds the workflow use cases on s with the real clock and
// randomness.
func NewWorkflow(s WorkflowStorage, cards Cards) *Workflow {
	return newWorkflow(newCore(s, cards), s)
}

func newWorkflow(c *core, s WorkflowStorage) *Workflow {
	return &Workflow{core: c, store: s, MaxCausationDepth: MaxCausationDepth}
}

// Get returns the operation the actor may see.
func (l *Workflow) Get(ctx context.Context, actor Actor, id string) (Operation, error) {
	return l.get(ctx, actor, id)
}

// List pages through the operations the actor may see.
func (l *Workflow) List(ctx context.Context, actor Actor, q ListQuery, provider string) ([]Operation, string, error) {
	if actor.Namespace != "" { // a workflow, or a person bound to one namespace
		if q.Namespace != "" && q.Namespace != actor.Namespace {
			return nil, "", nil // another namespace: nothing, never a hint that it exists
		}
		q.Namespace = actor.Namespace
	}
	if err := q.check(provider); err != nil {
		return nil, "", err
	}
	if !l.Cards.narrowToProvider(&q, provider) {
		return nil, "", nil // no type of that provider matches: nothing, rather than everything
	}
	l.Cards.hideContentFromSearch(actor, &q)
	return l.store.List(ctx, q)
}

// Attempts lists every attempt of the operation.
func (l *Workflow) Attempts(ctx context.Context, actor Actor, id string) ([]Attempt, error) {
	if _, err := l.Get(ctx, actor, id); err != nil {
		return nil, err
	}
	as, err := l.store.Attempts(ctx, id)
	if err != nil || len(as) == 0 {
		return as, err
	}
	events, err := l.store.Timeline(ctx, id)
	if err != nil {
		return nil, err
	}
	keys := attemptKeys(events)
	for i := range as {
		as[i].ProviderKey = keys[as[i].ID]
	}
	return as, nil
}

// attemptKeys are the provider keys the attempts were given, by attempt
// ID, as each claim's event recorded them: the key is fixed from the claim
// to the settle (a revision's new key is set only outside a lease).
func attemptKeys(events []AuditEvent) map[string]string {
	out := map[string]string{}
	for _, e := range events {
		var d struct {
			AttemptID   string `json:"attempt_id"`
			ProviderKey string `json:"provider_key"`
		}
		if len(e.Detail) == 0 || json.Unmarshal(e.Detail, &d) != nil || d.AttemptID == "" {
			continue
		}
		out[d.AttemptID] = d.ProviderKey
	}
	return out
}

// Timeline lists the operation's audit events in order.
func (l *Workflow) Timeline(ctx context.Context, actor Actor, id string) ([]AuditEvent, error) {
	if _, err := l.Get(ctx, actor, id); err != nil {
		return nil, err
	}
	return l.store.Timeline(ctx, id)
}

// ContentVersions lists every content snapshot of the operation.
func (l *Workflow) ContentVersions(ctx context.Context, actor Actor, id string) ([]ContentVersion, error) {
	op, err := l.Get(ctx, actor, id)
	if err != nil {
		return nil, err
	}
	vs, err := l.store.ContentVersions(ctx, id)
	if op.ContentHidden {
		hideVersions(vs)
	}
	return vs, err
}
