package domain

import (
	"context"
	"time"
)

// The audit trail's use cases: list, export, verify, checkpoint, purge.

// AuditSelect is an AuditQuery (the filters a person gives) with the scope
// the use case sets.
type AuditSelect struct {
	AuditQuery
	// Namespace keeps the operation events of one namespace. The system
	// stream is left out unless WithSystem is set.
	Namespace  string
	WithSystem bool
	// ByStream orders by stream, then seq, with the system stream first;
	// otherwise events come in write order.
	ByStream bool
}

// AuditReader reads the trail; every method streams in batches so that
// memory does not grow with the trail.
type AuditReader interface {
	// EachAudit calls fn for every event matching q in order. Write order
	// is consistent: no event committed earlier is left out because of one
	// written later.
	EachAudit(ctx context.Context, q AuditSelect, fn func(AuditEvent) error) error
	// EachOperationHead calls fn with every operation's version and audit
	// head, the stream's last event as the operation row records it.
	EachOperationHead(ctx context.Context, fn func(StreamHead) error) error
	// EachDrillReceipt calls fn with every stored drill receipt, its row
	// and its text.
	EachDrillReceipt(ctx context.Context, fn func(DrillRecord, []byte) error) error
}

// AuditStore is what the audit trail needs from persistence; the store
// package implements it beside Store.
type AuditStore interface {
	SystemAuditor
	AuditReader
	// ListAudit returns one page of events in write order, and the cursor
	// of the next page ("" on the last).
	ListAudit(ctx context.Context, q AuditSelect) ([]AuditEvent, string, error)
	// ReadSnapshot runs fn against one consistent snapshot of the database.
	ReadSnapshot(ctx context.Context, fn func(AuditReader) error) error
	// WriteCheckpoint, in one transaction that no other checkpoint runs
	// beside, reads the last checkpoint and the heads of the streams
	// changed after it — up to a write position below which no event can
	// still appear, at most maxHeads streams — and when there are any,
	// chains the event that build returns onto the system stream and
	// records the checkpoint. It reports whether it wrote one; it writes
	// none, without waiting, while another writer holds the system stream.
	WriteCheckpoint(ctx context.Context, maxHeads int,
		build func(prev Checkpoint, heads []StreamHead, uptoPos int64) (Checkpoint, AuditEvent)) (Checkpoint, bool, error)
	// PurgeCandidates lists up to limit final operations last changed
	// before cutoff whose streams still have events.
	PurgeCandidates(ctx context.Context, cutoff time.Time, limit int) ([]PurgeCandidate, error)
	// PurgeStream deletes the candidate's stream and chains the tombstone
	// onto the system stream, in one transaction; it refuses when the
	// operation moved or the stream does not end at the candidate's head.
	PurgeStream(ctx context.Context, c PurgeCandidate, tombstone AuditEvent) error
}

// AuditSink receives an export: Begin before the first event (even when
// there is none), Write for each, End after the last.
type AuditSink interface {
	Begin() error
	Write(AuditEvent) error
	End() error
}

// AuditExport is one export request; Format is recorded in its audit event.
type AuditExport struct {
	Query  AuditSelect
	Format string
}

// AuditTrail holds the audit use cases.
type AuditTrail struct {
	Store AuditStore
	IDs   *IDSource
	Now   func() time.Time
}

// NewAuditTrail wires the audit use cases with the real clock.
func NewAuditTrail(s AuditStore) *AuditTrail {
	return &AuditTrail{Store: s, IDs: &IDSource{}, Now: time.Now}
}

// Audit returns the audit use cases over the ledger's store, when that
// store keeps the trail (the store package's does).
func (l *Ledger) Audit() (*AuditTrail, error) {
	s, ok := l.Store.(AuditStore)
	if !ok {
		return nil, Errorf(EInternal, "the ledger's store keeps no audit trail")
	}
	return &AuditTrail{Store: s, IDs: l.IDs, Now: l.Now}, nil
}

// List pages through the events the actor may see. A person with any role
// sees everything; a workflow token sees its own namespace's operation
// events — what its timelines already show — and never the system stream.
func (t *AuditTrail) List(ctx context.Context, actor Actor, q AuditSelect) ([]AuditEvent, string, error) {
	switch {
	case actor.Kind == ActorWorkflow || actor.Namespace != "": // a person bound to one namespace reads as its workflows do
		q.Namespace, q.WithSystem = actor.Namespace, false
	case actor.Kind == ActorPerson && actor.Role.AtLeast(RoleViewer):
	default:
		return nil, "", Errorf(EForbidden, "reading the audit trail needs a role")
	}
	if err := checkRange(q); err != nil {
		return nil, "", err
	}
	return t.Store.ListAudit(ctx, q)
}

// MayExportAudit reports whether the actor may export the audit trail: the
// auditor and admin roles, and the command line, which holds the database.
func MayExportAudit(a Actor) bool {
	return a.Kind == ActorSystem || (a.Kind == ActorPerson && (a.Role == RoleAuditor || a.Role == RoleAdmin))
}

// Export streams every event matching the request to sink, in write order
// with every chain field. The export is itself an audit event, written
// before the first byte, so an export that fails half-way is on record too.
func (t *AuditTrail) Export(ctx context.Context, actor Actor, req AuditExport, sink AuditSink) error {
	if !MayExportAudit(actor) {
		return Errorf(EForbidden, "exporting the audit trail needs the auditor or admin role")
	}
	q := req.Query
	if err := checkRange(q); err != nil {
		return err
	}
	q.WithSystem, q.Cursor, q.Limit, q.ByStream = true, "", 0, false
	fields := map[string]any{"format": req.Format, "namespace": q.Namespace}
	if !q.From.IsZero() {
		fields["from"] = q.From.UTC().Format(time.RFC3339Nano)
	}
	if !q.To.IsZero() {
		fields["to"] = q.To.UTC().Format(time.RFC3339Nano)
	}
	e := SystemEvent(ctx, t.IDs, t.Now(), actor, ActionAuditExported, "", fields)
	if _, err := t.Store.AppendSystem(ctx, e); err != nil {
		return err
	}
	if err := sink.Begin(); err != nil {
		return err
	}
	if err := t.Store.EachAudit(ctx, q, sink.Write); err != nil {
		return err
	}
	return sink.End()
}

func checkRange(q AuditSelect) error {
	if errs := checkTexts([2]string{"operation_id", q.OperationID}, [2]string{"actor", q.Actor}, [2]string{"action", q.Action},
		[2]string{"namespace", q.Namespace}, [2]string{"cursor", q.Cursor}); len(errs) > 0 {
		return Invalid(errs...)
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return Invalid(FieldError{Field: "to", Message: "must be after from"})
	}
	return nil
}

// VerifyDB verifies the whole trail in the database from one snapshot:
// every chain, every checkpoint, every operation's audit head, and every
// stored drill receipt against the drill_recorded event that chained it.
func (t *AuditTrail) VerifyDB(ctx context.Context, v *Verifier) (Report, error) {
	var rep Report
	err := t.Store.ReadSnapshot(ctx, func(r AuditReader) error {
		each := func(fn func(AuditEvent, int64) error) error {
			var n int64
			return r.EachAudit(ctx, AuditSelect{ByStream: true}, func(e AuditEvent) error { n++; return fn(e, n) })
		}
		// Read after every event: what the database records against what
		// the trail chained.
		heads := func(fn func(StreamHead) error) error {
			if err := r.EachOperationHead(ctx, fn); err != nil {
				return err
			}
			return r.EachDrillReceipt(ctx, func(rec DrillRecord, text []byte) error { v.ExpectReceipt(rec, text); return nil })
		}
		var err error
		rep, err = VerifyEvents(v, each, heads)
		return err
	})
	return rep, err
}

// Checkpoint writes the next checkpoint if any stream changed since the
// last one, and reports whether it did.
func (t *AuditTrail) Checkpoint(ctx context.Context) (Checkpoint, bool, error) {
	return t.Store.WriteCheckpoint(ctx, MaxCheckpointHeads,
		func(prev Checkpoint, heads []StreamHead, upto int64) (Checkpoint, AuditEvent) {
			c := NewCheckpoint(prev, heads, upto)
			e := CheckpointEvent(ctx, t.IDs, t.Now(), c)
			c.EventID, c.At = e.ID, e.At
			return c, e
		})
}

// Purge removes up to limit streams that retention allows, each replaced by
// a tombstone, and returns how many it removed. Zero retention purges none.
func (t *AuditTrail) Purge(ctx context.Context, retention time.Duration, limit int) (int, error) {
	if retention <= 0 {
		return 0, nil
	}
	now := t.Now()
	cs, err := t.Store.PurgeCandidates(ctx, now.Add(-retention), limit)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, c := range cs {
		if !MayPurge(c, retention, now) {
			continue
		}
		if err := t.Store.PurgeStream(ctx, c, TombstoneEvent(ctx, t.IDs, now, c, retention)); ErrorCode(err) == EConflict {
			continue // the operation moved, or another replica purged it first
		} else if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
