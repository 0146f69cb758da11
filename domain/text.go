package domain

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Text that reaches the database must be valid UTF-8 without NUL: PostgreSQL
// refuses both (SQLSTATE 22021), and two different byte strings must never
// read back as the same text. What a caller chose — an identifier, a
// filter, a reason — is refused when it is not such text; what a worker
// relays from its provider is kept, made storable.

// ValidText reports whether s is valid UTF-8 without NUL.
func ValidText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// RelayedText is s with NUL and every invalid UTF-8 sequence replaced by
// U+FFFD: a provider's message is evidence to keep, and a worker must
// never be unable to settle because of what its provider said.
func RelayedText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// checkTexts lists a field error for each named value that is not
// ValidText.
func checkTexts(fields ...[2]string) []FieldError {
	var errs []FieldError
	for _, f := range fields {
		if !ValidText(f[1]) {
			errs = append(errs, FieldError{f[0], "must be valid UTF-8 text without NUL characters"})
		}
	}
	return errs
}

// checkID refuses an identifier no stored row can have as not found: it
// names nothing, so it must not reach the database.
func checkID(id, what string) error {
	if !ValidText(id) {
		return Errorf(ENotFound, "no such %s", what)
	}
	return nil
}

// loneSurrogate reports whether a JSON text escapes a UTF-16 surrogate
// that is not half of a pair, such as "\ud800". encoding/json reads every
// such escape as U+FFFD, so two different texts would become one content.
func loneSurrogate(raw []byte) bool {
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 4 {
			return 0, false
		}
		var r rune
		for _, c := range b[:4] {
			switch {
			case c >= '0' && c <= '9':
				r = r<<4 | rune(c-'0')
			case c >= 'a' && c <= 'f':
				r = r<<4 | rune(c-'a'+10)
			case c >= 'A' && c <= 'F':
				r = r<<4 | rune(c-'A'+10)
			default:
				return 0, false
			}
		}
		return r, true
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' || i+1 >= len(raw) {
			continue
		}
		if raw[i+1] != 'u' {
			i++ // an escaped character, perhaps a backslash: skip it
			continue
		}
		r, ok := hex4(raw[i+2:])
		if !ok {
			continue // not an escape the decoder accepts; it reports that itself
		}
		i += 5
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true // a low half with no high half before it
		case r >= 0xD800 && r <= 0xDBFF:
			if i+2 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
				return true
			}
			lo, ok := hex4(raw[i+3:])
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

// check refuses a list filter that is not text, naming the field as the
// API's and the desk's query strings do.
func (q ListQuery) check(provider string) error {
	fields := [][2]string{{"namespace", q.Namespace}, {"key", q.Key}, {"event_id", q.EventID},
		{"correlation_id", q.CorrelationID}, {"assignee", q.Assignee}, {"q", q.Text}, {"cursor", q.Cursor}, {"until", q.Until},
		{"provider", provider}}
	for _, t := range q.Types {
		fields = append(fields, [2]string{"type", t})
	}
	if errs := checkTexts(fields...); len(errs) > 0 {
		return Invalid(errs...)
	}
	return nil
}

// checkResult refuses a result reference that is not text: the reference
// is what a caller looks the result up by.
func checkResult(r *Result) []FieldError {
	if r == nil {
		return nil
	}
	return checkTexts([2]string{"result.ref", r.Ref})
}

// relayedResult keeps the provider's result data storable: invalid UTF-8
// inside its strings becomes U+FFFD (NUL inside JSON strings is already
// escaped).
func relayedResult(r *Result) *Result {
	if r == nil || r.Data == nil || utf8.Valid(r.Data) {
		return r
	}
	c := *r
	c.Data = bytes.ToValidUTF8(r.Data, []byte("\uFFFD"))
	return &c
}
