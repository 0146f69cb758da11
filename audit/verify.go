package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/opshandoff/handoff/domain"
)

// Verification reads an audit trail — the database, or an export file — one
// event at a time and reports where it breaks and how. It needs each
// stream's events in seq order (write order and (stream, seq) order both
// qualify) and keeps about two hundred bytes per stream, never the events.

// digest is a hash in binary; a value that is not 64 hex digits maps to a
// digest of its own text, so it still compares unequal to every real hash.
type digest [32]byte

func digestOf(s string) digest {
	var d digest
	if s == "" {
		return d
	}
	if len(s) == 64 {
		if _, err := hex.Decode(d[:], []byte(s)); err == nil {
			return d
		}
	}
	return sha256.Sum256([]byte("not a hash: " + s))
}

// chainState is what the verifier remembers of one stream: its head.
type chainState struct {
	seq, first int64  // the head's seq, and the first seq read
	sealed     int64  // the seq the head was sealed as (seq, unless moved)
	hash, prev digest // the head's hash and prev_hash
	id         string
	ref        int64
	shift      int64 // an explained renumbering: events sit at sealed seq + shift
	moveIdx    int   // 1 + index of a reordered break the next event may explain
	gapIdx     int   // 1 + index of a deleted break a late event may explain
	gapFrom    int64
	gapTo      int64
	fork       *fork // a second event claiming the head's seq
	claimed    bool  // an operation head was compared with it
}

type fork struct {
	hash digest
	id   string
	ref  int64
}

func (st *chainState) take(e domain.AuditEvent, ref int64, sealed int64) {
	st.seq, st.sealed, st.hash, st.prev, st.id, st.ref = e.Seq, sealed, digestOf(e.Hash), digestOf(e.PrevHash), e.ID, ref
}

// Add checks the next event of the input; ref locates it for the report.
func (v *Verifier) Add(e domain.AuditEvent, ref int64) {
	v.init()
	v.events++
	h, ok := domain.SealedHash(e)
	valid := ok && h == e.Hash
	st := v.streams[e.Stream]
	switch {
	case st == nil:
		v.first(e, ref, valid)
	case e.Seq == st.seq+1:
		v.next(st, e, ref, valid)
	case e.Seq > st.seq+1:
		at := v.add(BreakDeleted, e, ref, fmt.Sprintf("%s missing: seq %d follows seq %d (event %s, %s)",
			seqRange(st.seq+1, e.Seq-1), e.Seq, st.seq, st.id, v.where(st.ref)))
		if at > 0 {
			v.breaks[at-1].Seq = st.seq + 1
		}
		st.gapIdx, st.gapFrom, st.gapTo = at, st.seq+1, e.Seq-1
		if !valid {
			v.broken(nil, e, ref)
		}
		st.take(e, ref, e.Seq)
	case e.Seq == st.seq:
		v.same(st, e, ref, valid)
	default:
		v.late(st, e, ref, valid)
	}
	v.system(e, ref)
	v.confirm(e, ref)
}

// seqRange names missing seqs: "seq 4 is", "seq 4 to 6 are".
func seqRange(from, to int64) string {
	if from == to {
		return fmt.Sprintf("seq %d is", from)
	}
	return fmt.Sprintf("seq %d to %d are", from, to)
}

// first checks the first event read of a stream.
func (v *Verifier) first(e domain.AuditEvent, ref int64, valid bool) {
	st := &chainState{first: e.Seq}
	v.streams[e.Stream] = st
	switch {
	case !valid:
		v.broken(nil, e, ref)
	case e.Seq == 1 && e.PrevHash != "":
		v.add(BreakInserted, e, ref, "the stream's first event links to a previous event")
	case e.Seq != 1 && !v.Partial:
		at := v.add(BreakDeleted, e, ref, fmt.Sprintf("the stream starts at seq %d: %s missing "+
			"(an export filtered by time or namespace starts mid-stream: verify it as partial)", e.Seq, seqRange(1, e.Seq-1)))
		if at > 0 {
			v.breaks[at-1].Seq = 1
		}
	}
	st.take(e, ref, e.Seq)
}

// next checks the event that should follow the head.
func (v *Verifier) next(st *chainState, e domain.AuditEvent, ref int64, valid bool) {
	if st.fork != nil {
		v.resolveFork(st, e, ref)
	}
	keep := false
	switch {
	case valid && digestOf(e.PrevHash) == st.hash:
		st.moveIdx = 0
	case valid:
		v.addAt(BreakReplaced, e.Stream, st.seq, st.id, st.ref, fmt.Sprintf(
			"seq %d (event %s, %s) does not link to it: it was edited and re-sealed, or replaced", e.Seq, e.ID, v.where(ref)))
	default:
		keep = v.broken(st, e, ref)
	}
	if keep { // a swap: the head was sealed later, so it is what the next event links to
		st.seq, st.id, st.ref = e.Seq, e.ID, ref
		return
	}
	st.take(e, ref, e.Seq-st.shift)
}

// broken diagnoses an event whose hash does not match its content; st is
// its stream's head, nil when there is no head to compare with. It
// reports whether st's hash must be kept as the chain's end.
func (v *Verifier) broken(st *chainState, e domain.AuditEvent, ref int64) (keep bool) {
	x := v.sealedAs(e, st)
	switch {
	case x == 0:
		v.add(BreakEdited, e, ref, "the hash does not match the event's content: it was edited after it was written")
	case st == nil:
		v.add(BreakReordered, e, ref, fmt.Sprintf("the event was sealed as seq %d and appears as seq %d", x, e.Seq))
	case st.shift != 0 && x == e.Seq-st.shift && digestOf(e.PrevHash) == st.hash:
		if st.moveIdx > 0 && st.shift == -1 { // a second renumbered event: the first was not a swap
			b := &v.breaks[st.moveIdx-1]
			b.Kind, b.Detail = BreakDeleted, fmt.Sprintf("the event sealed as seq %d was deleted and the later events renumbered", b.Seq)
			st.moveIdx = 0
		}
	case st.moveIdx > 0 && x == e.Seq-1 && st.sealed == e.Seq:
		b := &v.breaks[st.moveIdx-1]
		b.Kind, b.Detail = BreakReordered, fmt.Sprintf("seq %d and %d were swapped: this event was sealed as seq %d", e.Seq-1, e.Seq, e.Seq)
		st.moveIdx, st.shift = 0, 0
		return true
	case x == e.Seq-1 && digestOf(e.PrevHash) == st.prev:
		v.addAt(BreakInserted, e.Stream, st.seq, st.id, st.ref, fmt.Sprintf(
			"the event is not part of the chain: seq %d (event %s) was sealed as seq %d and links to the event before it", e.Seq, e.ID, x))
		st.shift = 1
	default:
		st.moveIdx = v.add(BreakReordered, e, ref, fmt.Sprintf("the event was sealed as seq %d and appears as seq %d: "+
			"the stream was reordered, or renumbered after a deletion", x, e.Seq))
		st.shift = e.Seq - x
	}
	return false
}

// sealedAs finds the seq the event's hash was computed with, trying the
// explained shift first and then a window around e.Seq; 0 if none.
func (v *Verifier) sealedAs(e domain.AuditEvent, st *chainState) int64 {
	if len(v.breaks) >= v.maxBreaks() {
		return 0 // enough is known; keep the rest cheap
	}
	if _, ok := domain.SealedHash(e); !ok {
		return 0 // no seq makes a detail that is not JSON hash
	}
	try := func(x int64) bool {
		if x < 1 || x == e.Seq {
			return false
		}
		m := e
		m.Seq = x
		h, _ := domain.SealedHash(m)
		return h == e.Hash
	}
	if st != nil && st.shift != 0 && try(e.Seq-st.shift) {
		return e.Seq - st.shift
	}
	for d := int64(1); d <= 8; d++ {
		if try(e.Seq - d) {
			return e.Seq - d
		}
		if try(e.Seq + d) {
			return e.Seq + d
		}
	}
	return 0
}

// same handles a second event claiming the head's seq.
func (v *Verifier) same(st *chainState, e domain.AuditEvent, ref int64, valid bool) {
	switch {
	case digestOf(e.Hash) == st.hash:
		v.add(BreakDuplicate, e, ref, fmt.Sprintf("the event at %s appears again", v.where(st.ref)))
	case !valid:
		v.add(BreakInserted, e, ref, fmt.Sprintf("a second event claims seq %d and does not hash", e.Seq))
	default: // which one is genuine shows when the next event links to one of them
		st.fork = &fork{hash: digestOf(e.Hash), id: e.ID, ref: ref}
	}
}

func (v *Verifier) resolveFork(st *chainState, e domain.AuditEvent, ref int64) {
	f := st.fork
	st.fork = nil
	if digestOf(e.PrevHash) == f.hash {
		v.addAt(BreakInserted, e.Stream, st.seq, st.id, st.ref, fmt.Sprintf(
			"the event is not part of the chain: seq %d links to the other event claiming seq %d (event %s, %s)", e.Seq, st.seq, f.id, v.where(f.ref)))
		st.hash, st.id, st.ref = f.hash, f.id, f.ref
		return
	}
	v.addAt(BreakInserted, e.Stream, st.seq, f.id, f.ref, fmt.Sprintf(
		"the event is not part of the chain: it claims seq %d, which event %s (%s) holds", st.seq, st.id, v.where(st.ref)))
}

// late handles an event whose seq is below the head's: out of file order.
func (v *Verifier) late(st *chainState, e domain.AuditEvent, ref int64, valid bool) {
	if st.gapIdx > 0 && e.Seq >= st.gapFrom && e.Seq <= st.gapTo {
		b := &v.breaks[st.gapIdx-1]
		b.Kind, b.Seq = BreakReordered, st.gapTo+1
		b.Detail = fmt.Sprintf("the event appears before seq %d, which comes later (%s): the events are out of order", e.Seq, v.where(ref))
		st.gapIdx = 0
	} else {
		v.add(BreakReordered, e, ref, fmt.Sprintf("seq %d appears after seq %d (event %s, %s)", e.Seq, st.seq, st.id, v.where(st.ref)))
	}
	if !valid {
		v.add(BreakEdited, e, ref, "the hash does not match the event's content: it was edited after it was written")
	}
}
