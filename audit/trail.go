package audit

import (
	"context"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// The audit trail's use cases: list, export, verify, checkpoint, purge.

// Sink receives an export: Begin before the first event (even when
// there is none), Write for each, End after the last.
type Sink interface {
	Begin() error
	Write(domain.AuditEvent) error
	End() error
}

// Export is one export request; Format is recorded in its audit event.
type Export struct {
	Query  domain.AuditSelect
	Format string
}

// Trail holds the audit use cases.
type Trail struct {
	Store domain.AuditStore
	IDs   *domain.IDSource
	Now   func() time.Time
}

// NewTrail wires the audit use cases with the real clock.
func NewTrail(s domain.AuditStore) *Trail {
	return &Trail{Store: s, IDs: &domain.IDSource{}, Now: time.Now}
}

// OfLedger returns the audit use cases over the ledger's store, with the
// ledger's ids and clock.
func OfLedger(l *domain.Ledger) *Trail {
	return &Trail{Store: l.Store, IDs: l.IDs, Now: l.Now}
}

// List pages through the events the actor may see. A person with any role
// sees everything; a workflow token sees its own namespace's operation
// events — what its timelines already show — and never the system stream.
func (t *Trail) List(ctx context.Context, actor domain.Actor, q domain.AuditSelect) ([]domain.AuditEvent, string, error) {
	switch {
	case actor.Kind == domain.ActorWorkflow || actor.Namespace != "": // a person bound to one namespace reads as its workflows do
		q.Namespace, q.WithSystem = actor.Namespace, false
	case actor.Kind == domain.ActorPerson && actor.Role.AtLeast(domain.RoleViewer):
	default:
		return nil, "", domain.Errorf(domain.EForbidden, "reading the audit trail needs a role")
	}
	if err := domain.CheckAuditRange(q); err != nil {
		return nil, "", err
	}
	return t.Store.ListAudit(ctx, q)
}

// MayExport reports whether the actor may export the audit trail: the
// auditor and admin roles, and the command line, which holds the database.
func MayExport(a domain.Actor) bool {
	return a.Kind == domain.ActorSystem || (a.Kind == domain.ActorPerson && (a.Role == domain.RoleAuditor || a.Role == domain.RoleAdmin))
}

// Export streams every event matching the request to sink, in write order
// with every chain field. The export is itself an audit event, written
// before the first byte, so an export that fails half-way is on record too.
func (t *Trail) Export(ctx context.Context, actor domain.Actor, req Export, sink Sink) error {
	if !MayExport(actor) {
		return domain.Errorf(domain.EForbidden, "exporting the audit trail needs the auditor or admin role")
	}
	q := req.Query
	if err := domain.CheckAuditRange(q); err != nil {
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
	e := domain.SystemEvent(ctx, t.IDs, t.Now(), actor, domain.ActionAuditExported, "", fields)
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

// VerifyDB verifies the whole trail in the database from one snapshot:
// every chain, every checkpoint, every operation's audit head, and every
// stored drill receipt against the drill_recorded event that chained it.
func (t *Trail) VerifyDB(ctx context.Context, v *Verifier) (Report, error) {
	var rep Report
	err := t.Store.ReadSnapshot(ctx, func(r domain.AuditReader) error {
		each := func(fn func(domain.AuditEvent, int64) error) error {
			var n int64
			return r.EachAudit(ctx, domain.AuditSelect{ByStream: true}, func(e domain.AuditEvent) error { n++; return fn(e, n) })
		}
		// Read after every event: what the database records against what
		// the trail chained.
		heads := func(fn func(domain.StreamHead) error) error {
			if err := r.EachOperationHead(ctx, fn); err != nil {
				return err
			}
			return r.EachDrillReceipt(ctx, func(rec domain.DrillRecord, text []byte) error { v.ExpectReceipt(rec, text); return nil })
		}
		var err error
		rep, err = VerifyEvents(v, each, heads)
		return err
	})
	return rep, err
}

// Checkpoint writes the next checkpoint if any stream changed since the
// last one, and reports whether it did.
func (t *Trail) Checkpoint(ctx context.Context) (domain.Checkpoint, bool, error) {
	return t.Store.WriteCheckpoint(ctx, MaxCheckpointHeads,
		func(prev domain.Checkpoint, heads []domain.StreamHead, upto int64) (domain.Checkpoint, domain.AuditEvent) {
			c := NewCheckpoint(prev, heads, upto)
			e := CheckpointEvent(ctx, t.IDs, t.Now(), c)
			c.EventID, c.At = e.ID, e.At
			return c, e
		})
}

// Purge removes up to limit streams that retention allows, each replaced by
// a tombstone, and returns how many it removed. Zero retention purges none.
func (t *Trail) Purge(ctx context.Context, retention time.Duration, limit int) (int, error) {
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
		if err := t.Store.PurgeStream(ctx, c, TombstoneEvent(ctx, t.IDs, now, c, retention)); domain.ErrorCode(err) == domain.EConflict {
			continue // the operation moved, or another replica purged it first
		} else if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
