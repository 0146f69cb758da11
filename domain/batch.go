package domain

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// A batch is one decision a person takes on many desk items at once — an
// incident of eight timeouts retried with one reason. Each item is decided
// on its own, with the version the person saw when they previewed it, so an
// item that changed since is skipped and listed, never overwritten; one
// item's refusal never stops the others. Every event a batch writes carries
// its batch_id.

// MaxBatch bounds the items of one batch.
const MaxBatch = 1000

// BatchKind is the decision a batch applies to each item.
type BatchKind string

const (
	BatchResolve BatchKind = "resolve"
	BatchAssign  BatchKind = "assign"
	BatchNote    BatchKind = "note"
)

// BatchItem is one operation of a batch and the version the person saw.
type BatchItem struct {
	ID              string
	ExpectedVersion int64
}

// Batch is one decision for many items.
type Batch struct {
	Items    []BatchItem
	Kind     BatchKind
	Action   ResolveAction // resolve: retry, cancel, confirm_not_executed or resend_same_key
	Then     ResolveAction // after confirm_not_executed: retry or cancel
	Assignee Person        // assign: the zero Person unassigns
	Reason   string        // the reason of every item's decision; a note's text
	Preview  bool          // say what would happen, change nothing
	// RiskConfirmed says the person accepted that a retry may do an item's
	// side effect twice (Card.RetryRisk); without it such items are skipped.
	RiskConfirmed bool
}

// retries reports whether the batch's decision retries its items.
func (b Batch) retries() bool {
	return b.Kind == BatchResolve && (b.Action == ResolveRetry || b.Then == ResolveRetry)
}

// Batch outcomes of one item.
const (
	BatchWouldApply = "apply"   // preview: the decision is allowed now
	BatchApplied    = "applied" // recorded
	BatchSkipped    = "skipped" // refused; Why says why
)

// BatchItemResult is what happened, or would happen, to one item.
type BatchItemResult struct {
	ID      string
	Key     string
	From    State // the state the decision was taken on
	To      State // the state it leads (or led) to
	Version int64 // the version after the decision, or the current one
	Outcome string
	Why     string
	Code    Code
	Risk    string // a retry's risk for this item (Card.RetryRisk), "" when none
}

// BatchResult is a batch's answer: its ID and each item's result in order.
type BatchResult struct {
	ID      string
	Preview bool
	Items   []BatchItemResult
	Applied int // with Preview: how many would apply
	Skipped int
	// Kept says an applied batch's record was stored (BatchKeeper);
	// KeepError is why it was not. The decisions stand either way.
	Kept      bool
	KeepError error
}

type batchKey struct{}

// withBatch makes the audit events written for ctx carry the batch's ID.
func withBatch(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, batchKey{}, id)
}

func batchOf(ctx context.Context) string {
	id, _ := ctx.Value(batchKey{}).(string)
	return id
}

// withDetail adds a member to an event's detail object.
func withDetail(d json.RawMessage, key string, value any) json.RawMessage {
	m := map[string]any{}
	if len(d) > 0 {
		_ = json.Unmarshal(d, &m)
	}
	m[key] = value
	b, _ := json.Marshal(m)
	return b
}

func (b Batch) validate() error {
	var errs []FieldError
	switch n := len(b.Items); {
	case n == 0:
		errs = append(errs, FieldError{"operations", "must name at least one operation"})
	case n > MaxBatch:
		errs = append(errs, FieldError{"operations", fmt.Sprintf("may name at most %d operations, not %d", MaxBatch, n)})
	}
	seen := make(map[string]bool, len(b.Items))
	for i, it := range b.Items {
		switch {
		case it.ID == "":
			errs = append(errs, FieldError{fmt.Sprintf("operations[%d].id", i), "is required"})
		case seen[it.ID]:
			errs = append(errs, FieldError{fmt.Sprintf("operations[%d].id", i), "names " + it.ID + " twice"})
		case it.ExpectedVersion < 1 && b.Kind != BatchNote:
			errs = append(errs, FieldError{fmt.Sprintf("operations[%d].expected_version", i), "is required: the version you saw"})
		}
		seen[it.ID] = true
	}
	switch b.Kind {
	case BatchResolve:
		switch b.Action {
		case ResolveRetry, ResolveCancel, ResolveResendSameKey:
		case ResolveConfirmNotExecuted:
			if b.Then != ResolveRetry && b.Then != ResolveCancel {
				errs = append(errs, FieldError{"decision.then", "must be retry or cancel"})
			}
		case ResolveConfirmExecuted:
			errs = append(errs, FieldError{"decision.action", "confirm_executed needs each item's own provider reference: decide it item by item"})
		default:
			errs = append(errs, FieldError{"decision.action", "must be retry, cancel, confirm_not_executed or resend_same_key"})
		}
	case BatchAssign, BatchNote:
	default:
		errs = append(errs, FieldError{"decision.type", "must be resolve, assign or note"})
	}
	errs = append(errs, validReason("reason", b.Reason)...)
	if len(errs) > 0 {
		return Invalid(errs...)
	}
	return nil
}

// command is the batch's decision for one item.
func (b Batch) command(it BatchItem) Command {
	switch b.Kind {
	case BatchAssign:
		return Assign{To: b.Assignee, Reason: b.Reason, ExpectedVersion: it.ExpectedVersion}
	case BatchNote:
		return Note{Text: b.Reason}
	}
	return Resolve{Action: b.Action, Then: b.Then, Reason: b.Reason, ExpectedVersion: it.ExpectedVersion}
}

// Bulk holds the desk's decisions on many items at once (a Batch) and the
// records of the batches applied.
type Bulk struct {
	*core
	store BulkStorage
}

// BulkStorage is the store methods Bulk calls; their contracts are Store's
// and the capabilities'. The store package implements it.
type BulkStorage interface {
	coreStorage
	BatchKeeper
	personReader
	LoadMany(ctx context.Context, ids []string) ([]Operation, time.Time, error)
}

// NewBulk builds the bulk decisions on s with the real clock.
func NewBulk(s BulkStorage, cards Cards) *Bulk { return newBulk(newCore(s, cards), s) }

func newBulk(c *core, s BulkStorage) *Bulk { return &Bulk{core: c, store: s} }

// Batch previews or applies one decision to many items.
func (l *Bulk) Batch(ctx context.Context, actor Actor, b Batch) (BatchResult, error) {
	if err := requirePerson(actor, RoleOperator); err != nil {
		return BatchResult{}, err
	}
	if err := b.validate(); err != nil {
		return BatchResult{}, err
	}
	if b.Kind == BatchAssign { // one person for every item: checked once
		var err error
		if b.Assignee, err = assignee(ctx, l.store, actor, b.Assignee); err != nil {
			return BatchResult{}, err
		}
	}
	res := BatchResult{ID: l.IDs.New("bat"), Preview: b.Preview, Items: make([]BatchItemResult, 0, len(b.Items))}
	ctx = withBatch(ctx, res.ID)
	if !b.Preview {
		// Once applying, the batch finishes and is kept whatever its
		// caller does: a client that goes away half way must not leave
		// some items decided and no record of which.
		ctx = context.WithoutCancel(ctx)
	}
	var seen loaded
	if b.Preview {
		var err error
		if seen, err = l.loadItems(ctx, b.Items); err != nil {
			return BatchResult{}, err
		}
	}
	for _, it := range b.Items {
		var r BatchItemResult
		var err error
		if b.Preview {
			r, err = l.previewItem(ctx, actor, it, b, seen)
		} else {
			r, err = l.applyItem(ctx, actor, it, b)
		}
		if ErrorCode(err) == EUnavailable {
			return BatchResult{}, err // the database is gone: nothing more will work
		}
		if r.Outcome == BatchSkipped {
			res.Skipped++
		} else {
			res.Applied++
		}
		res.Items = append(res.Items, r)
	}
	if !b.Preview {
		l.keepBatch(ctx, actor, b, &res)
	}
	return res, nil
}

// skipped is an item's refusal as a result.
func skipped(r BatchItemResult, err error) BatchItemResult {
	e := AsError(err)
	r.Outcome, r.Code, r.Why = BatchSkipped, e.Code, e.Message
	if e.Code == EInternal {
		r.Why = "an internal error; it has been logged"
	}
	if e.Operation != nil && r.Key == "" {
		r.Key, r.From, r.Version = e.Operation.Key, e.Operation.State, e.Operation.Version
	}
	return r
}

// loaded is a preview's items as read at once, and the database's clock.
type loaded struct {
	ops map[string]Operation
	now time.Time
}

// loadItems reads every item of a batch in one go: a preview of a thousand
// items would otherwise wait on a thousand reads one after the other.
func (l *Bulk) loadItems(ctx context.Context, items []BatchItem) (loaded, error) {
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	ops, now, err := l.store.LoadMany(ctx, ids)
	if err != nil {
		return loaded{}, err
	}
	seen := loaded{ops: make(map[string]Operation, len(ops)), now: now}
	for _, op := range ops {
		seen.ops[op.ID] = op
	}
	return seen, nil
}

// previewItem decides the item, as loaded, without writing anything.
func (l *Bulk) previewItem(ctx context.Context, actor Actor, it BatchItem, b Batch, seen loaded) (BatchItemResult, error) {
	r, cmd := BatchItemResult{ID: it.ID}, b.command(it)
	op, ok := seen.ops[it.ID]
	if !ok || actor.Namespace != "" && op.Namespace != actor.Namespace {
		return skipped(r, Errorf(ENotFound, "no such operation")), nil
	}
	now := seen.now
	r.Key, r.From, r.Version = op.Key, op.State, op.Version
	card, err := l.Cards.Get(op.Type)
	if err != nil {
		return skipped(r, err), nil
	}
	cmd, changes, err := l.sinceSeen(ctx, op, cmd)
	if err != nil {
		return skipped(r, err), err
	}
	ch, err := Decide(op, cmd, l.env(ctx, card, actor, now))
	if err != nil {
		return skipped(r, staleWithChanges(err, changes)), nil
	}
	if b.retries() {
		r.Risk = card.RetryRisk(op)
	}
	r.Outcome, r.To = BatchWouldApply, ch.Op.State
	return r, nil
}

// applyItem records the decision on the item, as the person would one by one.
func (l *Bulk) applyItem(ctx context.Context, actor Actor, it BatchItem, b Batch) (BatchItemResult, error) {
	r := BatchItemResult{ID: it.ID}
	if b.retries() && !b.RiskConfirmed {
		if risk, err := l.retryRisk(ctx, it.ID); err != nil || risk != "" {
			if err == nil {
				err = Invalid(FieldError{"confirm_risk", "confirm the risk to retry: " + risk})
			}
			return skipped(r, err), err
		}
	}
	ch, err := l.mutate(ctx, actor, it.ID, b.command(it))
	if err != nil {
		return skipped(r, err), err
	}
	r.Outcome, r.Key, r.To, r.Version = BatchApplied, ch.Op.Key, ch.Op.State, ch.Op.Version
	if len(ch.Events) > 0 {
		r.From, _ = ParseState(ch.Events[0].FromState)
	}
	return r, nil
}

// staleWithChanges names, in a version conflict, the last change since the
// version the person saw.
func staleWithChanges(err error, changes []AuditEvent) error {
	e, ok := err.(*Error)
	if !ok || e.Code != EVersionConflict || len(e.Changes) > 0 || len(changes) == 0 {
		return err
	}
	e.Changes = changes
	last := changes[len(changes)-1]
	e.Message += fmt.Sprintf("; the last change: %s by %s at %s", last.Action, last.Actor.Identity(),
		last.At.UTC().Format(time.RFC3339))
	return e
}

// retryRisk is Card.RetryRisk for the operation as it is now.
func (l *Bulk) retryRisk(ctx context.Context, id string) (string, error) {
	op, _, err := l.store.Load(ctx, "", id)
	if err != nil {
		return "", err
	}
	card, err := l.Cards.Get(op.Type)
	if err != nil {
		return "", err
	}
	return card.RetryRisk(op), nil
}
