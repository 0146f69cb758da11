package domain

import (
	"context"
	"time"
)

// The audit trail's vocabulary that the store speaks: what a query selects,
// what the store reads and writes for the trail, checkpoints' and
// tombstones' heads. The trail as a product — formats, verification,
// checkpoints' Merkle roots, retention — lives in the audit package.

// The actions of the audit trail's own system events.
const (
	ActionCheckpoint    = "checkpoint"
	ActionStreamPurged  = "stream_purged"
	ActionAuditExported = "audit_exported"
)

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
	// NewestFirst turns a page (ListAudit) round: the latest first, as
	// the desk's audit page reads; the API and the export keep write order.
	NewestFirst bool
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

// CheckAuditRange refuses a selection with over-long texts or an empty
// time range.
func CheckAuditRange(q AuditSelect) error {
	if errs := checkTexts([2]string{"operation_id", q.OperationID}, [2]string{"actor", q.Actor}, [2]string{"action", q.Action},
		[2]string{"namespace", q.Namespace}, [2]string{"cursor", q.Cursor}); len(errs) > 0 {
		return Invalid(errs...)
	}
	if !q.From.IsZero() && !q.To.IsZero() && !q.From.Before(q.To) {
		return Invalid(FieldError{Field: "to", Message: "must be after from"})
	}
	return nil
}

// StreamHead is a stream's last event as some record saw it.
type StreamHead struct {
	Stream string
	Seq    int64
	Hash   string
}

// Checkpoint commits to the heads of the streams that changed in the write
// positions (previous UptoPos, UptoPos]. Seq numbers checkpoints from 1
// without gaps.
type Checkpoint struct {
	Seq     int64
	UptoPos int64
	Root    string
	Heads   []StreamHead // sorted by stream
	EventID string
	At      time.Time
}

// PurgeCandidate is an operation whose stream retention may remove.
type PurgeCandidate struct {
	Head      StreamHead // the operation's version and audit head
	State     State
	UpdatedAt time.Time
}

// ActionDrillRecorded is the system event that chains a stored drill
// receipt into the audit trail: its id, the SHA-256 of its text and what
// the Types page reads from its row (type, card, verdict, who ran it and
// when). Verifying the database compares every stored receipt with it.
const ActionDrillRecorded = "drill_recorded"

// DrillRecordedEvent builds the drill_recorded event of a receipt about to
// be stored; the store chains it in the transaction that stores it.
func DrillRecordedEvent(ctx context.Context, ids *IDSource, now time.Time, actor Actor, rec DrillRecord) AuditEvent {
	return SystemEvent(ctx, ids, now, actor, ActionDrillRecorded, "", map[string]any{
		"receipt_id": rec.ID, "type": rec.Type, "card_version": rec.CardVersion, "card_sha256": rec.CardSHA256,
		"verdict": rec.Verdict, "sha256": rec.SHA256, "ran_by": rec.RanBy,
		"ran_at": rec.RanAt.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano)})
}

// SealedHash is HashEvent for events read back from outside: a detail that
// is not JSON (a tampered row or cell) is reported, not panicked on.
func SealedHash(e AuditEvent) (string, bool) {
	c, err := e.canonicalJSON()
	if err != nil {
		return "", false
	}
	return SHA256Hex(append([]byte(e.PrevHash+"\n"), c...)), true
}
