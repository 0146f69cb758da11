package audit_test

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
)

// TestNeutraliseCell: a spreadsheet must show every cell as text, never run
// it as a formula (CSV injection), and verify must get the original back.
func TestNeutraliseCell(t *testing.T) {
	for in, want := range map[string]string{
		"=HYPERLINK(\"http://x\")": "'=HYPERLINK(\"http://x\")",
		"+1":                       "'+1",
		"-2+3":                     "'-2+3",
		"@SUM(A1)":                 "'@SUM(A1)",
		"\tindented":               "'\tindented",
		"\rreturn":                 "'\rreturn",
		"'quoted":                  "''quoted",
		"plain":                    "plain",
		"":                         "",
		"a=b":                      "a=b",
		"2026-03-01T12:00:00Z":     "2026-03-01T12:00:00Z",
		`{"n":-1}`:                 `{"n":-1}`,
	} {
		if got := audit.NeutraliseCell(in); got != want {
			t.Errorf("NeutraliseCell(%q) = %q, want %q", in, got, want)
		}
		if back := audit.RestoreCell(audit.NeutraliseCell(in)); back != in {
			t.Errorf("RestoreCell(NeutraliseCell(%q)) = %q", in, back)
		}
	}
}

// TestCSVExport_opensCleanly: the CSV is RFC 4180 (CRLF line ends, fields
// with quotes, commas or line breaks quoted, quotes doubled), has a header,
// no cell a spreadsheet would evaluate, and reads back into a trail that
// verifies.
func TestCSVExport_opensCleanly(t *testing.T) {
	b := standardTrail()
	evil := b.event("op_A", 6) // a row added by hand, claiming a seq already taken
	evil.ID, evil.Reason = "ev_EVIL", "@cmd|' /C calc'!A0\nsecond line"
	var buf bytes.Buffer
	sink, err := audit.NewEncoder(&buf, audit.FormatCSV)
	if err != nil {
		t.Fatal(err)
	}
	if err := sink.Begin(); err != nil {
		t.Fatal(err)
	}
	for _, e := range b.events {
		if err := sink.Write(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Write(evil); err != nil || sink.End() != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	if !bytes.HasPrefix(raw, []byte("\uFEFFid,stream,seq,")) || !bytes.HasSuffix(raw, []byte("\r\n")) {
		t.Fatalf("header or line ends: %q … %q", raw[:20], raw[len(raw)-4:])
	}
	if bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\r")) {
		t.Fatal("a bare CR outside quotes")
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(raw, []byte("\uFEFF"))))
	r.FieldsPerRecord = 22
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("not RFC 4180: %v", err)
	}
	if len(recs) != len(b.events)+2 {
		t.Fatalf("%d records, want %d", len(recs), len(b.events)+2)
	}
	for i, rec := range recs {
		for j, cell := range rec {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("record %d column %s starts a formula: %q", i, recs[0][j], cell)
			}
		}
	}
	if got := recs[len(recs)-1][16]; got != "'@cmd|' /C calc'!A0\nsecond line" {
		t.Errorf("the reason cell: %q", got)
	}

	b.events = append(b.events, evil)
	rep := verifyFile(t, raw, false)
	if rep.OK() || len(rep.Breaks) != 1 || rep.Breaks[0].EventID != evil.ID {
		t.Fatalf("CSV read back: want exactly the forged last row reported, got %v", rep.Breaks)
	}
	if rep.Events != int64(len(b.events)) || rep.Checkpoints != 2 {
		t.Fatalf("CSV read back: %+v", rep)
	}
}

func TestJSONLExport_linesAreWhatIsHashed(t *testing.T) {
	b := standardTrail()
	lines := b.jsonl(t)
	if len(lines) != len(b.events) {
		t.Fatalf("%d lines for %d events", len(lines), len(b.events))
	}
	// A line minus its hash, canonicalized, is exactly what was hashed.
	e := b.events[0]
	canon, err := domain.Canonicalize([]byte(strings.Replace(lines[0], `,"hash":"`+e.Hash+`"`, "", 1)))
	if err != nil || string(canon) != string(e.CanonicalJSON()) {
		t.Fatalf("line 1 without its hash:\n%s\nwant\n%s (%v)", canon, e.CanonicalJSON(), err)
	}
	if _, err := audit.DecodeExport(strings.NewReader(`{"id":"x","surprise":1}`+"\n"), func(domain.AuditEvent, int64) error { return nil }); err == nil {
		t.Fatal("an unknown member was accepted")
	}
}

func TestMerkleRoot(t *testing.T) {
	h := func(s string, seq int64) domain.StreamHead {
		return domain.StreamHead{Stream: s, Seq: seq, Hash: strings.Repeat("a", 64)}
	}
	empty := audit.MerkleRoot(nil)
	if empty != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("empty root %s", empty)
	}
	one, two, three := audit.MerkleRoot([]domain.StreamHead{h("a", 1)}),
		audit.MerkleRoot([]domain.StreamHead{h("a", 1), h("b", 1)}),
		audit.MerkleRoot([]domain.StreamHead{h("a", 1), h("b", 1), h("c", 1)})
	if one == two || two == three || one == empty {
		t.Fatal("roots collide")
	}
	if audit.MerkleRoot([]domain.StreamHead{h("a", 2), h("b", 1)}) == two {
		t.Fatal("the root does not cover seq")
	}
	c := audit.NewCheckpoint(domain.Checkpoint{Seq: 4}, []domain.StreamHead{h("b", 1), h("a", 1)}, 9)
	if c.Seq != 5 || c.Heads[0].Stream != "a" || c.Root != two {
		t.Fatalf("checkpoint %+v", c)
	}
}
