package audit

import "fmt"

// What verification reports: where the trail breaks and how.

// BreakKind says how the trail was changed, as far as the evidence tells.
type BreakKind string

// The kinds of break.
const (
	// BreakEdited: the event's hash does not match its content.
	BreakEdited BreakKind = "edited"
	// BreakReplaced: the event hashes right, but the next event does not
	// link to it — it was edited and re-sealed, or swapped for another.
	BreakReplaced BreakKind = "replaced"
	// BreakReordered: the event was sealed at another seq, or appears out
	// of order.
	BreakReordered BreakKind = "reordered"
	// BreakInserted: an event that is not part of the chain.
	BreakInserted BreakKind = "inserted"
	// BreakDeleted: seqs are missing from the stream.
	BreakDeleted BreakKind = "deleted"
	// BreakDuplicate: the same event appears twice.
	BreakDuplicate BreakKind = "duplicate"
	// BreakTruncated: the stream ends before a head recorded elsewhere.
	BreakTruncated BreakKind = "truncated"
	// BreakMissingStream: a recorded stream has no events at all.
	BreakMissingStream BreakKind = "missing_stream"
	// BreakCheckpoint: a checkpoint is malformed, out of sequence, or
	// disagrees with the event it recorded.
	BreakCheckpoint BreakKind = "checkpoint"
	// BreakOrphan: a stream whose operation does not exist.
	BreakOrphan BreakKind = "orphan_stream"
)

// Break is one place where the trail does not verify.
type Break struct {
	Kind    BreakKind
	Stream  string
	Seq     int64
	EventID string // the event at fault, or the one where the fault shows
	Ref     int64  // where that event is in the input: a line, or an ordinal
	Where   string // Ref for people: "line 12", "event #7"
	Detail  string
}

func (b Break) String() string {
	s := fmt.Sprintf("%s: stream %s, seq %d", b.Where, b.Stream, b.Seq)
	if b.EventID != "" {
		s += " (event " + b.EventID + ")"
	}
	return s + ": " + string(b.Kind) + " — " + b.Detail
}
