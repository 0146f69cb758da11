package domain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Canonicalize returns the RFC 8785 (JCS) form of a JSON text: object members
// sorted by their UTF-16 code units, numbers in ECMAScript form (so 1 and 1.0
// are the same), strings minimally escaped, no insignificant whitespace.
// Duplicate object member names are refused: two parsers could disagree on
// what such a document means, and a fingerprint must not.
func Canonicalize(raw []byte) ([]byte, error) {
	if !utf8.Valid(raw) {
		// encoding/json would replace it with U+FFFD, giving two different
		// documents one fingerprint.
		return nil, errors.New("the JSON text is not valid UTF-8")
	}
	if loneSurrogate(raw) {
		// Like invalid UTF-8: encoding/json would read it as U+FFFD.
		return nil, errors.New("the JSON text escapes a lone UTF-16 surrogate, which is not valid Unicode")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := canonValue(dec, &buf); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return buf.Bytes(), nil
}

func canonValue(dec *json.Decoder, buf *bytes.Buffer) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return canonObject(dec, buf)
		case '[':
			return canonArray(dec, buf)
		}
		return fmt.Errorf("unexpected %q", t)
	case string:
		writeCanonString(buf, t)
	case json.Number:
		s, err := canonNumber(t)
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	}
	return nil
}

func canonObject(dec *json.Decoder, buf *bytes.Buffer) error {
	type member struct {
		key   string
		units []uint16
		value []byte
	}
	var members []member
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("object key is not a string")
		}
		if seen[key] {
			return fmt.Errorf("duplicate object member %q", key)
		}
		seen[key] = true
		var v bytes.Buffer
		if err := canonValue(dec, &v); err != nil {
			return err
		}
		members = append(members, member{key, utf16.Encode([]rune(key)), v.Bytes()})
	}
	if _, err := dec.Token(); err != nil { // '}'
		return err
	}
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.units, b.units) })
	buf.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeCanonString(buf, m.key)
		buf.WriteByte(':')
		buf.Write(m.value)
	}
	buf.WriteByte('}')
	return nil
}

func canonArray(dec *json.Decoder, buf *bytes.Buffer) error {
	buf.WriteByte('[')
	for i := 0; dec.More(); i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := canonValue(dec, buf); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // ']'
		return err
	}
	buf.WriteByte(']')
	return nil
}

// canonNumber formats a number as ECMAScript's Number.prototype.toString does
// for the nearest IEEE 754 double, as RFC 8785 section 3.2.2.3 requires.
func canonNumber(n json.Number) (string, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("number %s is outside the range of JSON numbers", n)
	}
	if f == 0 {
		return "0", nil
	}
	abs := math.Abs(f)
	if abs >= 1e-6 && abs < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // e.g. 1e+21, 1.5e-07
	mant, exp, _ := strings.Cut(s, "e")
	sign, digits := exp[:1], strings.TrimLeft(exp[1:], "0")
	return mant + "e" + sign + digits, nil
}

func writeCanonString(buf *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	buf.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			buf.WriteString(`\"`)
		case r == '\\':
			buf.WriteString(`\\`)
		case r == '\b':
			buf.WriteString(`\b`)
		case r == '\f':
			buf.WriteString(`\f`)
		case r == '\n':
			buf.WriteString(`\n`)
		case r == '\r':
			buf.WriteString(`\r`)
		case r == '\t':
			buf.WriteString(`\t`)
		case r < 0x20:
			buf.WriteString(`\u00`)
			buf.WriteByte(hexDigits[r>>4])
			buf.WriteByte(hexDigits[r&0xf])
		default:
			buf.WriteRune(r)
		}
	}
	buf.WriteByte('"')
}

// Fingerprint is "sha256:" and the hex SHA-256 of the canonical JSON of
// {"content": content, "type": type}. content must already be canonical.
func Fingerprint(typ string, canonicalContent []byte) string {
	var buf bytes.Buffer
	buf.WriteString(`{"content":`)
	buf.Write(canonicalContent)
	buf.WriteString(`,"type":`)
	writeCanonString(&buf, typ)
	buf.WriteByte('}')
	return "sha256:" + SHA256Hex(buf.Bytes())
}

// SHA256Hex is the lowercase hex SHA-256 of b.
func SHA256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// CanonicalObject canonicalizes raw and checks that it is a JSON object.
func CanonicalObject(raw []byte) ([]byte, error) {
	c, err := Canonicalize(raw)
	if err != nil {
		return nil, err
	}
	if len(c) == 0 || c[0] != '{' {
		return nil, errors.New("must be a JSON object")
	}
	return c, nil
}
