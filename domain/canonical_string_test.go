package domain

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// writeCanonStringByRune is writeCanonString as it was first written, one
// character at a time: the reference the run-copying one must match.
func writeCanonStringByRune(buf *bytes.Buffer, s string) {
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

// TestWriteCanonString_asByRune: any string — control characters, quotes,
// multi-byte characters, U+FFFD itself and invalid UTF-8 — is written byte
// for byte as the character-at-a-time writer wrote it, so no audit hash
// changes.
func TestWriteCanonString_asByRune(t *testing.T) {
	alphabet := []byte{'a', 'Z', ' ', '"', '\\', '\n', '\t', 0x00, 0x1f, 0x7f, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0xef, 0xbf, 0xbd, 0xf0, 0x9f, 0x98, 0x80, 0xff, 0xed, 0xa0}
	check := func(t rapid.TB, s string) {
		var got, want bytes.Buffer
		writeCanonString(&got, s)
		writeCanonStringByRune(&want, s)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("%q: wrote %q, want %q", s, got.Bytes(), want.Bytes())
		}
	}
	for _, s := range []string{"", "plain", `a"b\c`, "é€😀", "\xff", "\xed\xa0\x80", "\xef\xbf\xbd", "tail\xc3", "\x00\x1f\x7f"} {
		check(t, s)
	}
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 40).Draw(t, "bytes")
		check(t, string(b))
	})
}

func BenchmarkWriteCanonString(b *testing.B) {
	s := "first send of content version 1 under the operation's provider key"
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		writeCanonString(&buf, s)
	}
}
