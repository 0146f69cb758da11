package audit

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/opshandoff/handoff/domain"
)

// Verifier checks an audit trail read one event at a time: Add each event,
// ExpectLast each operation's recorded head (when reading a database), run
// Recheck over the input again when NeedsSecondPass says so, then Report.
type Verifier struct {
	// Partial accepts streams that start mid-way and ignores checkpoint
	// heads outside what was read: an export filtered by time or namespace.
	Partial bool
	// RefName names Ref in reports: "line" for a file; "event #" default.
	RefName string
	// MaxBreaks bounds the breaks kept (default 100); the rest are counted.
	MaxBreaks int
	// Roots are the checkpoints' roots as published outside the database
	// (ReadRoots); nil checks none. Each checkpoint must have its published
	// root, and each published checkpoint must be in the trail.
	Roots map[int64]string
	// Restored accepts published checkpoints after the trail's last one: a
	// database restored from a backup lacks what came after the backup.
	// They are counted in Report.LaterRoots.
	Restored bool

	streams     map[string]*chainState
	pending     map[string][]expectation // checkpoint heads not yet seen
	tombs       map[string]domain.StreamHead
	lastCP      int64
	heads       bool
	drills      map[string]*recordedDrill // receipt id → its drill_recorded event
	receipts    bool                      // the stored receipts were compared
	events      int64
	checkpoints int64
	breaks      []Break
	omitted     int
	seenRoots   map[int64]bool
	laterRoots  int
}

// expectation is a head a checkpoint recorded.
type expectation struct {
	head    domain.StreamHead
	cp      int64
	ref     int64
	eventID string
}

// Report is the outcome of a verification.
type Report struct {
	Events, Streams, Checkpoints int64
	Breaks                       []Break // in input order; the first is where the trail first breaks
	Omitted                      int     // breaks found beyond those listed
	// LaterRoots counts published checkpoints after the trail's last one,
	// accepted because the verifier was told the database was Restored.
	LaterRoots int
}

// OK reports whether the trail verified.
func (r Report) OK() bool { return len(r.Breaks) == 0 && r.Omitted == 0 }

func (v *Verifier) init() {
	if v.streams == nil {
		v.streams, v.pending, v.tombs = map[string]*chainState{}, map[string][]expectation{}, map[string]domain.StreamHead{}
	}
}

func (v *Verifier) maxBreaks() int { return cmp.Or(v.MaxBreaks, 100) }

func (v *Verifier) where(ref int64) string {
	if ref == 0 {
		return "at the end"
	}
	if v.RefName == "line" {
		return fmt.Sprintf("line %d", ref)
	}
	return fmt.Sprintf("%s%d", cmp.Or(v.RefName, "event #"), ref)
}

// add records a break at event e; it returns 1 + its index, 0 if dropped.
func (v *Verifier) add(kind BreakKind, e domain.AuditEvent, ref int64, detail string) int {
	return v.addAt(kind, e.Stream, e.Seq, e.ID, ref, detail)
}

func (v *Verifier) addAt(kind BreakKind, stream string, seq int64, id string, ref int64, detail string) int {
	if len(v.breaks) >= v.maxBreaks() {
		v.omitted++
		return 0
	}
	v.breaks = append(v.breaks, Break{Kind: kind, Stream: stream, Seq: seq, EventID: id, Ref: ref, Where: v.where(ref), Detail: detail})
	return len(v.breaks)
}

// system takes in what checkpoints and tombstones record.
func (v *Verifier) system(e domain.AuditEvent, ref int64) {
	if e.Stream != domain.SystemStream {
		return
	}
	switch e.Action {
	case domain.ActionStreamPurged:
		if h, err := ParseTombstone(e); err == nil {
			v.tombs[h.Stream] = h
		} else {
			v.add(BreakEdited, e, ref, err.Error())
		}
	case domain.ActionDrillRecorded:
		v.drillRecorded(e, ref)
	case domain.ActionCheckpoint:
		c, err := ParseCheckpoint(e)
		if err != nil {
			v.add(BreakCheckpoint, e, ref, err.Error())
			return
		}
		v.checkpoints++
		if want := v.lastCP + 1; c.Seq != want && !(v.Partial && v.lastCP == 0) {
			v.add(BreakCheckpoint, e, ref, fmt.Sprintf("checkpoint %d follows checkpoint %d: checkpoints are missing or repeated", c.Seq, v.lastCP))
		}
		v.lastCP = c.Seq
		if root := MerkleRoot(c.Heads); root != c.Root {
			v.add(BreakCheckpoint, e, ref, fmt.Sprintf("checkpoint %d: its heads give root %.16s…, it records %.16s…", c.Seq, root, c.Root))
		}
		v.checkPublished(c, e, ref)
		for _, h := range c.Heads {
			v.expect(h, c.Seq, e.ID, ref)
		}
	}
}

// expect checks a checkpoint head against the stream's head when that is
// at hand, and otherwise remembers it for the event or the end.
func (v *Verifier) expect(h domain.StreamHead, cp int64, eventID string, ref int64) {
	if st := v.streams[h.Stream]; st != nil {
		var got digest
		id, at := "", ref
		switch h.Seq {
		case st.seq:
			got, id, at = st.hash, st.id, st.ref
		case st.seq - 1:
			got = st.prev
		default:
			v.pending[h.Stream] = append(v.pending[h.Stream], expectation{h, cp, ref, eventID})
			return
		}
		if got != digestOf(h.Hash) {
			v.addAt(BreakCheckpoint, h.Stream, h.Seq, id, at, fmt.Sprintf(
				"checkpoint %d (event %s) recorded hash %.16s… for this seq; the stream has %.16s… there: the event was replaced after the checkpoint",
				cp, eventID, h.Hash, fmt.Sprintf("%x", got[:])))
		}
		return
	}
	v.pending[h.Stream] = append(v.pending[h.Stream], expectation{h, cp, ref, eventID})
}

// confirm settles the pending heads that e is the event of.
func (v *Verifier) confirm(e domain.AuditEvent, ref int64) {
	xs := v.pending[e.Stream]
	if len(xs) == 0 {
		return
	}
	kept := xs[:0]
	for _, x := range xs {
		if x.head.Seq != e.Seq {
			kept = append(kept, x)
			continue
		}
		if x.head.Hash != e.Hash {
			v.add(BreakCheckpoint, e, ref, fmt.Sprintf("checkpoint %d (event %s) recorded hash %.16s… for this event; it has %.16s…: it was replaced after the checkpoint",
				x.cp, x.eventID, x.head.Hash, e.Hash))
		}
	}
	if len(kept) == 0 {
		delete(v.pending, e.Stream)
	} else {
		v.pending[e.Stream] = kept
	}
}

// NeedsSecondPass reports whether checkpoint heads name events that were
// read before the checkpoint and could not be compared then; Recheck each
// event of the input again to compare them.
func (v *Verifier) NeedsSecondPass() bool {
	for stream, xs := range v.pending {
		st := v.streams[stream]
		for _, x := range xs {
			if st != nil && x.head.Seq >= st.first && x.head.Seq <= st.seq {
				return true
			}
		}
	}
	return false
}

// Recheck is the second pass: it only compares pending checkpoint heads.
func (v *Verifier) Recheck(e domain.AuditEvent, ref int64) { v.confirm(e, ref) }

// ExpectLast compares a stream with the head its operation records
// (version and audit_head): the stream must end exactly there.
func (v *Verifier) ExpectLast(h domain.StreamHead) {
	v.init()
	v.heads = true
	st := v.streams[h.Stream]
	tomb, purged := v.tombs[h.Stream]
	switch {
	case st == nil && purged:
		if tomb.Seq != h.Seq || tomb.Hash != h.Hash {
			v.addAt(BreakTruncated, h.Stream, h.Seq, "", 0, fmt.Sprintf("the stream was purged at seq %d, but its operation is at version %d", tomb.Seq, h.Seq))
		}
	case st == nil:
		v.addAt(BreakMissingStream, h.Stream, h.Seq, "", 0, fmt.Sprintf("the operation is at version %d, but its stream has no events: they were deleted", h.Seq))
	case st.seq < h.Seq:
		v.addAt(BreakTruncated, h.Stream, st.seq+1, "", st.ref, fmt.Sprintf("the operation is at version %d, but its stream ends at seq %d (event %s): the last events were deleted", h.Seq, st.seq, st.id))
	case st.seq > h.Seq:
		v.addAt(BreakInserted, h.Stream, st.seq, st.id, st.ref, fmt.Sprintf("the stream goes on past its operation's version %d: events were added outside the ledger", h.Seq))
	case st.hash != digestOf(h.Hash):
		v.addAt(BreakReplaced, h.Stream, st.seq, st.id, st.ref, "the stream's last event is not the one its operation's audit head records: it was replaced")
	}
	if st != nil {
		st.claimed = true
	}
}

// Report finishes the verification — heads that were never met, streams
// without an operation, forks never resolved — and is called once.
func (v *Verifier) Report() Report {
	v.init()
	v.drillReport()
	v.missingPublished()
	for _, stream := range slices.Sorted(maps.Keys(v.pending)) {
		st := v.streams[stream]
		tomb, purged := v.tombs[stream]
		for _, x := range v.pending[stream] {
			switch {
			case purged && tomb.Seq >= x.head.Seq:
				if tomb.Seq == x.head.Seq && tomb.Hash != x.head.Hash {
					v.addAt(BreakCheckpoint, stream, x.head.Seq, "", x.ref, fmt.Sprintf("checkpoint %d and the stream's tombstone record different hashes", x.cp))
				}
			case v.Partial && (st == nil || x.head.Seq < st.first || x.head.Seq > st.seq):
				// outside what was exported
			case st == nil:
				v.addAt(BreakMissingStream, stream, x.head.Seq, "", x.ref, fmt.Sprintf(
					"checkpoint %d (event %s) recorded the stream at seq %d, but it has no events and no tombstone: it was deleted", x.cp, x.eventID, x.head.Seq))
			case x.head.Seq > st.seq:
				v.addAt(BreakTruncated, stream, st.seq+1, "", st.ref, fmt.Sprintf(
					"checkpoint %d (event %s) recorded the stream at seq %d, but it ends at seq %d (event %s): the last events were deleted", x.cp, x.eventID, x.head.Seq, st.seq, st.id))
			}
		}
	}
	for _, stream := range slices.Sorted(maps.Keys(v.streams)) {
		st := v.streams[stream]
		if f := st.fork; f != nil {
			v.addAt(BreakInserted, stream, st.seq, f.id, f.ref, fmt.Sprintf("a second event claims seq %d, which event %s (%s) holds", st.seq, st.id, v.where(st.ref)))
		}
		if v.heads && !st.claimed && stream != domain.SystemStream {
			v.addAt(BreakOrphan, stream, st.first, "", 0, "the stream has events but no operation")
		}
	}
	breaks := slices.Clone(v.breaks)
	last := func(ref int64) int64 { // breaks with no place in the input go last
		if ref == 0 {
			return 1<<63 - 1
		}
		return ref
	}
	slices.SortStableFunc(breaks, func(a, b Break) int { return cmp.Compare(last(a.Ref), last(b.Ref)) })
	return Report{Events: v.events, Streams: int64(len(v.streams)), Checkpoints: v.checkpoints, Breaks: breaks, Omitted: v.omitted,
		LaterRoots: v.laterRoots}
}

// VerifyEvents runs a verifier over a re-readable input: each calls fn for
// every event in order with its ref, and is called again for the second
// pass when one is needed. last, when not nil, is given ExpectLast.
func VerifyEvents(v *Verifier, each func(fn func(domain.AuditEvent, int64) error) error, last func(fn func(domain.StreamHead) error) error) (Report, error) {
	if err := each(func(e domain.AuditEvent, ref int64) error { v.Add(e, ref); return nil }); err != nil {
		return Report{}, err
	}
	if last != nil {
		if err := last(func(h domain.StreamHead) error { v.ExpectLast(h); return nil }); err != nil {
			return Report{}, err
		}
	}
	if v.NeedsSecondPass() {
		if err := each(func(e domain.AuditEvent, ref int64) error { v.Recheck(e, ref); return nil }); err != nil {
			return Report{}, err
		}
	}
	return v.Report(), nil
}
