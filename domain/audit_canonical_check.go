package domain

import (
	"bytes"
	"unicode/utf8"
)

// detailIsCanonical reports whether raw is already what canonDetail makes
// of it, so sealing can hash it as it is instead of parsing it again: the
// ledger writes every detail with json.Marshal of a map, which is
// compact with its members in byte order — canonical unless it holds a
// float, an escape RFC 8785 does not use (<, >, & and U+2028 as \u…) or a
// member name outside ASCII. It accepts only what it can prove canonical
// (ASCII member names in increasing order, strings escaped as
// writeCanonString escapes them, integers of at most 15 digits, no white
// space) and leaves everything else to canonDetail.
func detailIsCanonical(raw []byte) bool {
	c := canonCheck{b: raw}
	return c.value(0) && c.i == len(raw)
}

// canonCheck reads one JSON text, refusing anything not in canonical form.
type canonCheck struct {
	b []byte
	i int
}

// maxCanonCheckDepth bounds the nesting checked here; deeper goes the long way.
const maxCanonCheckDepth = 32

func (c *canonCheck) value(depth int) bool {
	if c.i >= len(c.b) || depth > maxCanonCheckDepth {
		return false
	}
	switch ch := c.b[c.i]; {
	case ch == '{':
		return c.object(depth)
	case ch == '[':
		return c.array(depth)
	case ch == '"':
		_, ok := c.str()
		return ok
	case ch == 't':
		return c.lit("true")
	case ch == 'f':
		return c.lit("false")
	case ch == 'n':
		return c.lit("null")
	case ch == '-' || (ch >= '0' && ch <= '9'):
		return c.integer()
	}
	return false
}

func (c *canonCheck) lit(s string) bool {
	if !bytes.HasPrefix(c.b[c.i:], []byte(s)) {
		return false
	}
	c.i += len(s)
	return true
}

// integer accepts -?(0|[1-9][0-9]*) of at most 15 digits (exact as a
// float64, so canonNumber writes it back unchanged), not -0, and nothing
// after it that would make it a fraction or an exponent.
func (c *canonCheck) integer() bool {
	neg := c.b[c.i] == '-'
	if neg {
		c.i++
	}
	start := c.i
	for c.i < len(c.b) && c.b[c.i] >= '0' && c.b[c.i] <= '9' {
		c.i++
	}
	n := c.i - start
	if n == 0 || n > 15 || (c.b[start] == '0' && (n > 1 || neg)) {
		return false
	}
	return c.i == len(c.b) || (c.b[c.i] != '.' && c.b[c.i] != 'e' && c.b[c.i] != 'E')
}

// str accepts a string as writeCanonString writes it: valid UTF-8, no
// control character unescaped, and only the escapes it uses. It returns
// the bytes between the quotes.
func (c *canonCheck) str() ([]byte, bool) {
	c.i++ // the opening quote
	start := c.i
	for c.i < len(c.b) {
		switch ch := c.b[c.i]; {
		case ch == '"':
			s := c.b[start:c.i]
			c.i++
			return s, utf8.Valid(s)
		case ch < 0x20:
			return nil, false
		case ch == '\\':
			if c.i+1 >= len(c.b) {
				return nil, false
			}
			switch c.b[c.i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				c.i += 2
			case 'u': // only \u00xx, lower-case, for a control character without a short form
				if c.i+5 >= len(c.b) || c.b[c.i+2] != '0' || c.b[c.i+3] != '0' {
					return nil, false
				}
				hi, lo := c.b[c.i+4], c.b[c.i+5]
				if (hi != '0' && hi != '1') || !((lo >= '0' && lo <= '9') || (lo >= 'a' && lo <= 'f')) {
					return nil, false
				}
				switch string([]byte{hi, lo}) {
				case "08", "09", "0a", "0c", "0d":
					return nil, false
				}
				c.i += 6
			default:
				return nil, false
			}
		default:
			c.i++
		}
	}
	return nil, false
}

func (c *canonCheck) array(depth int) bool {
	c.i++
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
		return true
	}
	for {
		if !c.value(depth + 1) {
			return false
		}
		if done, ok := c.after(']'); !ok || done {
			return ok
		}
	}
}

// object accepts members whose names are ASCII without escapes (their byte
// order is then RFC 8785's order) in strictly increasing order, so none is
// named twice.
func (c *canonCheck) object(depth int) bool {
	c.i++
	if c.i < len(c.b) && c.b[c.i] == '}' {
		c.i++
		return true
	}
	var prev []byte
	for first := true; ; first = false {
		if c.i >= len(c.b) || c.b[c.i] != '"' {
			return false
		}
		name, ok := c.str()
		if !ok || !plainASCII(name) || (!first && bytes.Compare(prev, name) >= 0) {
			return false
		}
		prev = name
		if c.i >= len(c.b) || c.b[c.i] != ':' {
			return false
		}
		c.i++
		if !c.value(depth + 1) {
			return false
		}
		if done, ok := c.after('}'); !ok || done {
			return ok
		}
	}
}

// after reads what follows a member or an element: end closes the
// container (done), a comma leads to the next, anything else is refused.
func (c *canonCheck) after(end byte) (done, ok bool) {
	if c.i >= len(c.b) {
		return false, false
	}
	switch c.b[c.i] {
	case end:
		c.i++
		return true, true
	case ',':
		c.i++
		return false, true
	}
	return false, false
}

// plainASCII: printable ASCII without a backslash.
func plainASCII(s []byte) bool {
	for _, ch := range s {
		if ch < 0x20 || ch >= 0x7f || ch == '\\' {
			return false
		}
	}
	return true
}
