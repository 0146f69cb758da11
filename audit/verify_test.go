package audit_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
)

// trailBuilder writes a valid audit trail in memory, the way the ledger and
// the checkpointer would: chained streams interleaved in write order, and
// checkpoints over the streams changed since the last one.
type trailBuilder struct {
	ids     *domain.IDSource
	events  []domain.AuditEvent
	heads   map[string]domain.AuditEvent
	changed map[string]bool
	cp      domain.Checkpoint
}

func newTrail() *trailBuilder {
	return &trailBuilder{ids: &domain.IDSource{}, heads: map[string]domain.AuditEvent{}, changed: map[string]bool{}}
}

func (b *trailBuilder) chain(e domain.AuditEvent) domain.AuditEvent {
	last := b.heads[e.Stream]
	e = domain.ChainAfter(e, last.Seq, last.Hash)
	b.heads[e.Stream] = e
	b.events = append(b.events, e)
	return e
}

func (b *trailBuilder) op(stream, action string) domain.AuditEvent {
	b.changed[stream] = true
	return b.chain(domain.AuditEvent{ID: b.ids.New("ev"), Stream: stream, OperationID: stream, Namespace: "campaigns",
		At: t0.Add(time.Duration(len(b.events)) * time.Second), Actor: workflow, Action: action, Reason: "=1+1 \"quoted\", and, commas",
		RequestID: "req-1", ClientAddr: "192.0.2.7", Detail: []byte(`{"n":` + fmt.Sprint(len(b.events)) + `}`)})
}

func (b *trailBuilder) system(action string, fields map[string]any) domain.AuditEvent {
	return b.chain(domain.SystemEvent(context.Background(), b.ids, t0, domain.System, action, "", fields))
}

func (b *trailBuilder) checkpoint() domain.AuditEvent {
	var heads []domain.StreamHead
	for s := range b.changed {
		heads = append(heads, domain.StreamHead{Stream: s, Seq: b.heads[s].Seq, Hash: b.heads[s].Hash})
	}
	b.changed = map[string]bool{}
	b.cp = audit.NewCheckpoint(b.cp, heads, int64(len(b.events)))
	return b.chain(audit.CheckpointEvent(context.Background(), b.ids, t0, b.cp))
}

// standardTrail: three operations of four events each, interleaved, a
// token event, a checkpoint, then two more events on the first operation
// and a second checkpoint.
func standardTrail() *trailBuilder {
	b := newTrail()
	for _, action := range []string{"registered", "claimed", "began", "settled"} {
		for _, op := range []string{"op_A", "op_B", "op_C"} {
			b.op(op, action)
		}
	}
	b.system("token_created", map[string]any{"token_id": "tok_1"})
	b.checkpoint()
	b.op("op_A", "noted")
	b.op("op_A", "assigned")
	b.checkpoint()
	return b
}

func (b *trailBuilder) jsonl(t *testing.T) []string {
	t.Helper()
	var buf bytes.Buffer
	sink, _ := audit.NewEncoder(&buf, audit.FormatJSONL)
	if err := sink.Begin(); err != nil {
		t.Fatal(err)
	}
	for _, e := range b.events {
		if err := sink.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.End(); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// lineOf is the 1-based line of the event of stream at seq.
func (b *trailBuilder) lineOf(stream string, seq int64) int {
	for i, e := range b.events {
		if e.Stream == stream && e.Seq == seq {
			return i + 1
		}
	}
	return 0
}

func (b *trailBuilder) event(stream string, seq int64) domain.AuditEvent {
	return b.events[b.lineOf(stream, seq)-1]
}

func verifyFile(t *testing.T, data []byte, partial bool) audit.Report {
	t.Helper()
	v := &audit.Verifier{Partial: partial, RefName: "line"}
	rep, err := audit.VerifyEvents(v, func(fn func(domain.AuditEvent, int64) error) error {
		_, err := audit.DecodeExport(bytes.NewReader(data), fn)
		return err
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func joinLines(lines []string) []byte { return []byte(strings.Join(lines, "\n") + "\n") }

func TestVerify_untouchedExportVerifies(t *testing.T) {
	b := standardTrail()
	rep := verifyFile(t, joinLines(b.jsonl(t)), false)
	if !rep.OK() || rep.Events != int64(len(b.events)) || rep.Streams != 4 || rep.Checkpoints != 2 {
		t.Fatalf("untouched: %+v", rep)
	}
}

// TestVerify_tamperedExport edits, deletes, reorders and inserts lines of a
// JSON Lines export and expects the first break at the line touched.
func TestVerify_tamperedExport(t *testing.T) {
	type want struct {
		kind    audit.BreakKind
		stream  string
		seq     int64
		eventID string
		line    int64
	}
	cases := map[string]func(b *trailBuilder, lines []string) ([]string, want){
		"edit": func(b *trailBuilder, lines []string) ([]string, want) {
			n := b.lineOf("op_B", 2)
			lines[n-1] = strings.Replace(lines[n-1], `"action":"claimed"`, `"action":"noted"`, 1)
			return lines, want{audit.BreakEdited, "op_B", 2, b.event("op_B", 2).ID, int64(n)}
		},
		"edit and re-seal": func(b *trailBuilder, lines []string) ([]string, want) {
			e := b.event("op_B", 2)
			e.Reason = "nothing happened"
			e.Hash = domain.HashEvent(e)
			n := b.lineOf("op_B", 2)
			lines[n-1] = encodeLine(t, e)
			return lines, want{audit.BreakReplaced, "op_B", 2, e.ID, int64(n)}
		},
		"delete": func(b *trailBuilder, lines []string) ([]string, want) {
			n := b.lineOf("op_B", 2)
			next := b.lineOf("op_B", 3) - 1 // one line up once n is gone
			return append(lines[:n-1:n-1], lines[n:]...), want{audit.BreakDeleted, "op_B", 2, b.event("op_B", 3).ID, int64(next)}
		},
		"reorder": func(b *trailBuilder, lines []string) ([]string, want) {
			i, j := b.lineOf("op_B", 2), b.lineOf("op_B", 3)
			lines[i-1], lines[j-1] = lines[j-1], lines[i-1]
			return lines, want{audit.BreakReordered, "op_B", 3, b.event("op_B", 3).ID, int64(i)}
		},
		"insert": func(b *trailBuilder, lines []string) ([]string, want) {
			e := b.event("op_B", 2)
			e.ID, e.Reason = "ev_FORGED", "approved by nobody"
			e.Hash = domain.HashEvent(e)
			n := b.lineOf("op_B", 2)
			out := append(append(append([]string{}, lines[:n-1]...), encodeLine(t, e)), lines[n-1:]...)
			return out, want{audit.BreakInserted, "op_B", 2, "ev_FORGED", int64(n)}
		},
		"delete a stream's last event": func(b *trailBuilder, lines []string) ([]string, want) {
			n := b.lineOf("op_C", 4)
			return append(lines[:n-1:n-1], lines[n:]...), want{audit.BreakTruncated, "op_C", 4, "", int64(b.lineOf("op_C", 3))}
		},
		"delete a whole stream": func(b *trailBuilder, lines []string) ([]string, want) {
			var out []string
			for i, l := range lines {
				if b.events[i].Stream != "op_C" {
					out = append(out, l)
				}
			}
			return out, want{audit.BreakMissingStream, "op_C", 4, "", int64(b.lineOf(domain.SystemStream, 2) - 4)}
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			b := standardTrail()
			lines, w := tamper(b, b.jsonl(t))
			rep := verifyFile(t, joinLines(lines), false)
			if rep.OK() {
				t.Fatal("the tampered export verifies")
			}
			got := rep.Breaks[0]
			if got.Kind != w.kind || got.Stream != w.stream || got.Seq != w.seq || got.EventID != w.eventID || got.Ref != w.line {
				t.Fatalf("first break %v\nwant %s at line %d, %s seq %d event %q\nall: %v", got, w.kind, w.line, w.stream, w.seq, w.eventID, rep.Breaks)
			}
		})
	}
}

func encodeLine(t *testing.T, e domain.AuditEvent) string {
	var buf bytes.Buffer
	sink, _ := audit.NewEncoder(&buf, audit.FormatJSONL)
	if err := sink.Write(e); err != nil || sink.End() != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestVerify_partialExport(t *testing.T) {
	b := standardTrail()
	lines := b.jsonl(t)[3:] // the first three events fell before --from
	if rep := verifyFile(t, joinLines(lines), false); rep.OK() || rep.Breaks[0].Kind != audit.BreakDeleted {
		t.Fatalf("a cut export verified as complete: %+v", rep)
	}
	if rep := verifyFile(t, joinLines(lines), true); !rep.OK() {
		t.Fatalf("a cut export as partial: %v", rep.Breaks)
	}
	lines = append(lines[:3:3], lines[4:]...) // and op_A seq 3 deleted inside it
	if rep := verifyFile(t, joinLines(lines), true); rep.OK() || rep.Breaks[0].Kind != audit.BreakDeleted {
		t.Fatalf("a gap inside a partial export: %+v", rep)
	}
}

func TestVerify_tombstoneAccountsForAPurgedStream(t *testing.T) {
	b := standardTrail()
	c := b.heads["op_C"]
	b.system(domain.ActionStreamPurged, map[string]any{"stream": "op_C", "seq": c.Seq, "hash": c.Hash})
	b.checkpoint()
	var kept []domain.AuditEvent
	for _, e := range b.events {
		if e.Stream != "op_C" {
			kept = append(kept, e)
		}
	}
	b.events = kept
	if rep := verifyFile(t, joinLines(b.jsonl(t)), false); !rep.OK() {
		t.Fatalf("purged with a tombstone: %v", rep.Breaks)
	}
}

func TestVerify_detailThatIsNotJSON(t *testing.T) {
	b := standardTrail()
	e := b.event("op_B", 2)
	b.events[b.lineOf("op_B", 2)-1].Detail = []byte("{not json")
	v := &audit.Verifier{}
	for i, ev := range b.events {
		v.Add(ev, int64(i+1))
	}
	rep := v.Report()
	if rep.OK() || rep.Breaks[0].Kind != audit.BreakEdited || rep.Breaks[0].EventID != e.ID {
		t.Fatalf("a detail that is not JSON: %v", rep.Breaks)
	}
}
