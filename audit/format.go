package audit

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// The export formats belong to the audit trail, not to one adapter: the
// API, the desk and the command line write them, and `handoff audit verify`
// reads them back. A JSON Lines line is the event with exactly the members
// CanonicalJSON hashes, plus "hash", so anyone can re-check it with an RFC
// 8785 library and SHA-256. The CSV has one column per field.

// Export formats.
const (
	FormatJSONL = "jsonl"
	FormatCSV   = "csv"
)

type lineActor struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Issuer    string `json:"issuer"`
	Subject   string `json:"subject"`
	Email     string `json:"email"`
	Role      string `json:"role"`
	Namespace string `json:"namespace"`
}

// auditLine is one JSON Lines record.
type auditLine struct {
	ID          string          `json:"id"`
	Stream      string          `json:"stream"`
	Seq         int64           `json:"seq"`
	OperationID string          `json:"operation_id"`
	Namespace   string          `json:"namespace"`
	At          string          `json:"at"`
	Actor       lineActor       `json:"actor"`
	Action      string          `json:"action"`
	FromState   string          `json:"from_state"`
	ToState     string          `json:"to_state"`
	Reason      string          `json:"reason"`
	Detail      json.RawMessage `json:"detail,omitempty"`
	RequestID   string          `json:"request_id"`
	ClientAddr  string          `json:"client_addr"`
	PrevHash    string          `json:"prev_hash"`
	Hash        string          `json:"hash"`
}

// csvHeader names the CSV columns, in order.
var csvHeader = []string{"id", "stream", "seq", "operation_id", "namespace", "at", "actor_kind", "actor_name",
	"actor_namespace", "actor_issuer", "actor_subject", "actor_email", "actor_role", "action", "from_state",
	"to_state", "reason", "detail", "request_id", "client_addr", "prev_hash", "hash"}

func csvRecord(e domain.AuditEvent) []string {
	return []string{e.ID, e.Stream, strconv.FormatInt(e.Seq, 10), e.OperationID, e.Namespace,
		e.At.UTC().Format(time.RFC3339Nano), e.Actor.Kind.String(), e.Actor.Name, e.Actor.Namespace, e.Actor.Issuer,
		e.Actor.Subject, e.Actor.Email, e.Actor.Role.String(), e.Action, e.FromState, e.ToState, e.Reason,
		string(e.Detail), e.RequestID, e.ClientAddr, e.PrevHash, e.Hash}
}

func fromRecord(r []string) (domain.AuditEvent, error) {
	seq, err := strconv.ParseInt(r[2], 10, 64)
	if err != nil {
		return domain.AuditEvent{}, fmt.Errorf("seq %q is not a number", r[2])
	}
	l := auditLine{ID: r[0], Stream: r[1], Seq: seq, OperationID: r[3], Namespace: r[4], At: r[5],
		Actor:  lineActor{Kind: r[6], Name: r[7], Namespace: r[8], Issuer: r[9], Subject: r[10], Email: r[11], Role: r[12]},
		Action: r[13], FromState: r[14], ToState: r[15], Reason: r[16], RequestID: r[18], ClientAddr: r[19], PrevHash: r[20], Hash: r[21]}
	if r[17] != "" {
		l.Detail = json.RawMessage(r[17])
	}
	return l.event()
}

// event converts a record back. Values outside a closed set become its zero
// value, which changes the canonical form, so the hash shows the edit.
func (l auditLine) event() (domain.AuditEvent, error) {
	at, err := time.Parse(time.RFC3339Nano, l.At)
	if err != nil {
		return domain.AuditEvent{}, fmt.Errorf("at %q is not an RFC 3339 time", l.At)
	}
	kind, _ := domain.ParseActorKind(l.Actor.Kind)
	role, _ := domain.ParseRole(l.Actor.Role)
	return domain.AuditEvent{ID: l.ID, Stream: l.Stream, Seq: l.Seq, OperationID: l.OperationID, Namespace: l.Namespace,
		At: at.UTC(), Actor: domain.Actor{Kind: kind, Name: l.Actor.Name, Namespace: l.Actor.Namespace, Issuer: l.Actor.Issuer,
			Subject: l.Actor.Subject, Email: l.Actor.Email, Role: role},
		Action: l.Action, FromState: l.FromState, ToState: l.ToState, Reason: l.Reason, Detail: l.Detail,
		RequestID: l.RequestID, ClientAddr: l.ClientAddr, PrevHash: l.PrevHash, Hash: l.Hash}, nil
}

// NewEncoder returns a sink that writes the export to w in format.
// It buffers; End flushes.
func NewEncoder(w io.Writer, format string) (Sink, error) {
	switch format {
	case FormatJSONL, "":
		bw := bufio.NewWriterSize(w, 64<<10)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		return &jsonlSink{w: bw, enc: enc}, nil
	case FormatCSV:
		return &csvSink{out: w, w: csv.NewWriter(w)}, nil
	}
	return nil, domain.Invalid(domain.FieldError{Field: "format", Message: "must be jsonl or csv"})
}

type jsonlSink struct {
	w   *bufio.Writer
	enc *json.Encoder
}

func (s *jsonlSink) Begin() error { return nil }
func (s *jsonlSink) End() error   { return s.w.Flush() }

func (s *jsonlSink) Write(e domain.AuditEvent) error {
	a := e.Actor
	return s.enc.Encode(auditLine{ID: e.ID, Stream: e.Stream, Seq: e.Seq, OperationID: e.OperationID, Namespace: e.Namespace,
		At: e.At.UTC().Format(time.RFC3339Nano), Actor: lineActor{Kind: a.Kind.String(), Name: a.Name, Issuer: a.Issuer,
			Subject: a.Subject, Email: a.Email, Role: a.Role.String(), Namespace: a.Namespace},
		Action: e.Action, FromState: e.FromState, ToState: e.ToState, Reason: e.Reason, Detail: e.Detail,
		RequestID: e.RequestID, ClientAddr: e.ClientAddr, PrevHash: e.PrevHash, Hash: e.Hash})
}

// csvSink writes RFC 4180 CSV (CRLF line ends, quoted where needed) after
// a UTF-8 byte order mark, which spreadsheets need to read UTF-8.
type csvSink struct {
	out io.Writer
	w   *csv.Writer
	rec []string
}

const utf8BOM = "\uFEFF"

func (s *csvSink) Begin() error {
	s.w.UseCRLF = true
	if _, err := io.WriteString(s.out, utf8BOM); err != nil {
		return err
	}
	return s.w.Write(csvHeader)
}

func (s *csvSink) Write(e domain.AuditEvent) error {
	s.rec = csvRecord(e)
	for i, v := range s.rec {
		s.rec[i] = NeutraliseCell(v)
	}
	return s.w.Write(s.rec)
}

func (s *csvSink) End() error {
	s.w.Flush()
	return s.w.Error()
}

// NeutraliseCell keeps a spreadsheet from reading a cell as a formula
// (CSV injection): a cell starting with = + - @, a tab or a carriage return
// gets a leading apostrophe. A cell that starts with an apostrophe gets one
// too, so that RestoreCell can undo it exactly and verify sees the original.
func NeutraliseCell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r'", rune(v[0])) {
		return "'" + v
	}
	return v
}

// RestoreCell undoes NeutraliseCell.
func RestoreCell(v string) string { return strings.TrimPrefix(v, "'") }

// DecodeExport reads an export in either format, calling fn with each
// event and the line it starts on; it returns the format it found.
func DecodeExport(r io.Reader, fn func(domain.AuditEvent, int64) error) (string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(3)
	if bytes.Equal(head, []byte(utf8BOM)) {
		_, _ = br.Discard(3)
	}
	first, _ := br.Peek(1)
	if len(first) == 0 || first[0] == '{' { // an empty file is an empty JSON Lines export
		return FormatJSONL, decodeJSONL(br, fn)
	}
	return FormatCSV, decodeCSV(br, fn)
}

func decodeJSONL(br *bufio.Reader, fn func(domain.AuditEvent, int64) error) error {
	for n := int64(1); ; n++ {
		line, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var l auditLine
			dec := json.NewDecoder(bytes.NewReader(line))
			dec.DisallowUnknownFields()
			if derr := dec.Decode(&l); derr != nil {
				return fmt.Errorf("line %d is not an audit event: %v", n, derr)
			}
			e, derr := l.event()
			if derr != nil {
				return fmt.Errorf("line %d: %v", n, derr)
			}
			if ferr := fn(e, n); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err
		}
	}
}

func decodeCSV(br *bufio.Reader, fn func(domain.AuditEvent, int64) error) error {
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = len(csvHeader)
	cr.ReuseRecord = true
	hdr, err := cr.Read()
	if err != nil || strings.Join(hdr, ",") != strings.Join(csvHeader, ",") {
		return fmt.Errorf("not an audit export: the first line is neither a JSON event nor the CSV header")
	}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return err // csv.ParseError names the line
		}
		line, _ := cr.FieldPos(0)
		for i := range rec {
			rec[i] = RestoreCell(rec[i])
		}
		e, err := fromRecord(rec)
		if err != nil {
			return fmt.Errorf("line %d: %v", line, err)
		}
		if err := fn(e, int64(line)); err != nil {
			return err
		}
	}
}
