package domain

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// Sealing is on every write's path, so the event's canonical form is
// written directly: its members are fixed and ASCII, so their RFC 8785
// order is known in advance, and only Detail is parsed. This is byte for
// byte what canonicalizing json.Marshal of the event's members gives
// (audit_canonical_test.go checks it), and much faster (docs/design/
// performance-log.md).

// canonicalJSON is CanonicalJSON that reports a Detail which is not a JSON
// value, or not canonicalizable, instead of panicking.
func (e AuditEvent) canonicalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(512 + len(e.Detail))
	str := func(key, v string) {
		b.WriteString(key)
		writeCanonString(&b, v)
	}
	a := e.Actor
	str(`{"action":`, e.Action)
	str(`,"actor":{"email":`, a.Email)
	str(`,"issuer":`, a.Issuer)
	str(`,"kind":`, a.Kind.String())
	str(`,"name":`, a.Name)
	str(`,"namespace":`, a.Namespace)
	str(`,"role":`, a.Role.String())
	str(`,"subject":`, a.Subject)
	str(`},"at":`, e.At.UTC().Format(time.RFC3339Nano))
	str(`,"client_addr":`, e.ClientAddr)
	if len(e.Detail) > 0 {
		d := []byte(e.Detail)
		if !detailIsCanonical(d) { // audit_canonical_check.go: what the ledger writes mostly is
			var err error
			if d, err = canonDetail(e.Detail); err != nil {
				return nil, err
			}
		}
		b.WriteString(`,"detail":`)
		b.Write(d)
	}
	str(`,"from_state":`, e.FromState)
	str(`,"id":`, e.ID)
	str(`,"namespace":`, e.Namespace)
	str(`,"operation_id":`, e.OperationID)
	str(`,"prev_hash":`, e.PrevHash)
	str(`,"reason":`, e.Reason)
	str(`,"request_id":`, e.RequestID)
	seq, err := canonNumber(json.Number(strconv.FormatInt(e.Seq, 10)))
	if err != nil {
		return nil, err
	}
	b.WriteString(`,"seq":`)
	b.WriteString(seq)
	str(`,"stream":`, e.Stream)
	str(`,"to_state":`, e.ToState)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// canonDetail canonicalizes a detail in one pass of json.Unmarshal rather
// than Canonicalize's token stream. Unmarshal keeps the last of duplicate
// members where Canonicalize refuses them; no detail the ledger writes has
// any, and a tampered one with duplicates just hashes differently.
func canonDetail(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("unexpected data after the detail")
	}
	var b bytes.Buffer
	if err := writeCanonAny(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonAny(b *bytes.Buffer, v any) error {
	switch t := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case string:
		writeCanonString(b, t)
	case json.Number:
		s, err := canonNumber(t)
		if err != nil {
			return err
		}
		b.WriteString(s)
	case []any:
		b.WriteByte('[')
		for i, x := range t {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonAny(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonString(b, k)
			b.WriteByte(':')
			if err := writeCanonAny(b, t[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	}
	return nil
}

// compareUTF16 orders member names by their UTF-16 code units (RFC 8785,
// section 3.2.3); for names without surrogate pairs that is byte order.
func compareUTF16(a, b string) int {
	ascii := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return false
			}
		}
		return true
	}
	if ascii(a) && ascii(b) {
		return strings.Compare(a, b)
	}
	return slices.Compare(utf16.Encode([]rune(a)), utf16.Encode([]rune(b)))
}
