package domain

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxNesting is how deep content may nest objects and arrays; the content
// object itself is level 1. Deeper documents cost every reader — the desk's
// renderers, a person's eyes — far more than they can be worth.
const MaxNesting = 64

// NestingError is a JSON text nested deeper than MaxNesting. Path is where
// the first too-deep value starts, relative to the document: ".a.b[3]".
type NestingError struct{ Path string }

func (e *NestingError) Error() string {
	return fmt.Sprintf("is nested deeper than %d levels", MaxNesting)
}

// Field names where the too-deep value is, under the field that held the
// document: "content.a.b[3]".
func (e *NestingError) Field(under string) string { return under + e.Path }

// contentError is why a document in field could not be canonicalized,
// naming the too-deep value's path when that was the reason.
func contentError(field string, err error) FieldError {
	var deep *NestingError
	if errors.As(err, &deep) {
		return FieldError{deep.Field(field), deep.Error()}
	}
	return FieldError{field, err.Error()}
}

// Canonicalize returns the RFC 8785 (JCS) form of a JSON text: object members
// sorted by their UTF-16 code units, numbers in ECMAScript form (so 1 and 1.0
// are the same), strings minimally escaped, no insignificant whitespace.
// Duplicate object member names are refused: two parsers could disagree on
// what such a document means, and a fingerprint must not. So are lone
// surrogate escapes, which no UTF-8 text can hold, and nesting deeper than
// MaxNesting (a *NestingError).
//
// It costs time linear in the text: the text is validated by encoding/json's
// scanner, read once into a tree whose scalars are already canonical, then
// written once in member order.
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
	if !json.Valid(raw) {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, err
		}
		return nil, errors.New("the text is not JSON")
	}
	p := &canonParser{src: raw}
	p.arena.Grow(len(raw))
	// Every element but an array's first follows a comma: sized once, the
	// scratch stacks never grow.
	p.elems = make([]canonNode, 0, bytes.Count(raw, []byte(","))+1)
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, p.arena.Len()+len(raw)/4)
	return root.appendTo(out, p.arena.Bytes()), nil
}

// canonParser reads one document already known to be valid JSON; arena
// holds every scalar's and member name's canonical text, and path the
// members and indexes leading to the value being read.
type canonParser struct {
	src   []byte
	pos   int
	arena bytes.Buffer
	path  []pathStep
	// elems and members are scratch stacks for the containers being read:
	// a container copies its children out once, exactly sized, when it
	// closes, so no slice is grown per container.
	elems   []canonNode
	members []canonMember
}

// pathStep is a member name or, when index ≥ 0, an array index.
type pathStep struct {
	key   string
	index int
}

// canonNode is a parsed value: an object, an array, or a scalar whose
// canonical text is arena[lo:hi].
type canonNode struct {
	kind    byte // '{', '[' or 0
	lo, hi  int32
	members []canonMember
	elems   []canonNode
}

// canonMember is an object member; arena[klo:khi] is its name, canonical.
type canonMember struct {
	units    []uint16
	klo, khi int32
	value    canonNode
}

func (n *canonNode) appendTo(out, arena []byte) []byte {
	switch n.kind {
	case '{':
		out = append(out, '{')
		for i := range n.members {
			m := &n.members[i]
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, arena[m.klo:m.khi]...)
			out = append(out, ':')
			out = m.value.appendTo(out, arena)
		}
		return append(out, '}')
	case '[':
		out = append(out, '[')
		for i := range n.elems {
			if i > 0 {
				out = append(out, ',')
			}
			out = n.elems[i].appendTo(out, arena)
		}
		return append(out, ']')
	}
	return append(out, arena[n.lo:n.hi]...)
}

func (p *canonParser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// value reads the value at pos, depth levels inside the document.
func (p *canonParser) value(depth int) (canonNode, error) {
	p.skipSpace()
	c := p.src[p.pos]
	if (c == '{' || c == '[') && depth == MaxNesting {
		return canonNode{}, p.tooDeep()
	}
	switch c {
	case '{':
		p.pos++
		return p.object(depth + 1)
	case '[':
		p.pos++
		return p.array(depth + 1)
	}
	lo := p.arena.Len()
	switch c {
	case '"':
		s, err := p.str()
		if err != nil {
			return canonNode{}, err
		}
		writeCanonString(&p.arena, s)
	case 't':
		p.pos += len("true")
		p.arena.WriteString("true")
	case 'f':
		p.pos += len("false")
		p.arena.WriteString("false")
	case 'n':
		p.pos += len("null")
		p.arena.WriteString("null")
	default:
		start, integer := p.pos, true
		for p.pos < len(p.src) && strings.IndexByte("+-0123456789.eE", p.src[p.pos]) >= 0 {
			integer = integer && (p.src[p.pos] == '-' || p.src[p.pos] >= '0' && p.src[p.pos] <= '9')
			p.pos++
		}
		num := p.src[start:p.pos]
		if integer && len(num) <= 15 && string(num) != "-0" {
			// An integer of up to 15 digits is a double exactly, written as
			// ECMAScript writes it (valid JSON has no leading zeros).
			p.arena.Write(num)
			break
		}
		s, err := canonNumber(json.Number(num))
		if err != nil {
			return canonNode{}, err
		}
		p.arena.WriteString(s)
	}
	return canonNode{lo: int32(lo), hi: int32(p.arena.Len())}, nil
}

func (p *canonParser) tooDeep() error {
	var b strings.Builder
	for _, st := range p.path {
		if st.index >= 0 {
			b.WriteString("[" + strconv.Itoa(st.index) + "]")
		} else {
			b.WriteString(pathMember(st.key))
		}
	}
	return &NestingError{Path: b.String()}
}

func (p *canonParser) object(depth int) (canonNode, error) {
	n := canonNode{kind: '{'}
	mark := len(p.members)
	var seen map[string]bool
	for {
		p.skipSpace()
		switch p.src[p.pos] {
		case '}':
			p.pos++
			n.members = slices.Clone(p.members[mark:])
			clear(p.members[mark:])
			p.members = p.members[:mark]
			slices.SortFunc(n.members, func(a, b canonMember) int { return slices.Compare(a.units, b.units) })
			return n, nil
		case ',':
			p.pos++
			p.skipSpace()
		}
		key, err := p.str()
		if err != nil {
			return canonNode{}, err
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		if seen[key] {
			return canonNode{}, fmt.Errorf("duplicate object member %q", key)
		}
		seen[key] = true
		klo := p.arena.Len()
		writeCanonString(&p.arena, key)
		khi := p.arena.Len()
		p.skipSpace()
		p.pos++ // ':'
		p.path = append(p.path, pathStep{key, -1})
		v, err := p.value(depth)
		if err != nil {
			return canonNode{}, err
		}
		p.path = p.path[:len(p.path)-1]
		p.members = append(p.members, canonMember{utf16.Encode([]rune(key)), int32(klo), int32(khi), v})
	}
}

func (p *canonParser) array(depth int) (canonNode, error) {
	n := canonNode{kind: '['}
	mark := len(p.elems)
	for i := 0; ; i++ {
		p.skipSpace()
		switch p.src[p.pos] {
		case ']':
			p.pos++
			n.elems = slices.Clone(p.elems[mark:])
			clear(p.elems[mark:])
			p.elems = p.elems[:mark]
			return n, nil
		case ',':
			p.pos++
		}
		p.path = append(p.path, pathStep{index: i})
		v, err := p.value(depth)
		if err != nil {
			return canonNode{}, err
		}
		p.path = p.path[:len(p.path)-1]
		p.elems = append(p.elems, v)
	}
}

// str reads the string at pos (its opening quote) and returns its value.
func (p *canonParser) str() (string, error) {
	p.pos++ // '"'
	start := p.pos
	plain := true
	for p.src[p.pos] != '"' {
		if p.src[p.pos] == '\\' {
			plain = false
			p.pos++
		}
		p.pos++
	}
	raw := p.src[start:p.pos]
	p.pos++
	if plain {
		return string(raw), nil
	}
	return unescapeJSON(raw)
}

// unescapeJSON decodes the escapes of a valid JSON string's body, refusing
// a surrogate escape that is not half of a pair: it stands for no
// character, and decoders disagree on what to make of it.
func unescapeJSON(raw []byte) (string, error) {
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r := hex4(raw[i+1 : i+5])
			i += 4
			if utf16.IsSurrogate(r) {
				var r2 rune = -1
				if i+6 < len(raw) && raw[i+1] == '\\' && raw[i+2] == 'u' {
					r2 = hex4(raw[i+3 : i+7])
				}
				pair := utf16.DecodeRune(r, r2)
				if pair == utf8.RuneError {
					return "", errors.New("a string holds a lone surrogate escape (\\u" + string(raw[i-3:i+1]) + "), which is no character")
				}
				r = pair
				i += 6
			}
			b.WriteRune(r)
		default: // '"', '\\', '/'
			b.WriteByte(raw[i])
		}
	}
	return b.String(), nil
}

func hex4(h []byte) rune {
	n, _ := strconv.ParseUint(string(h), 16, 32)
	return rune(n)
}

// pathMember is a member's step in a path: .name for plain names, else the
// name as a JSON string in brackets.
func pathMember(key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	if plain {
		return "." + key
	}
	var b bytes.Buffer
	b.WriteByte('[')
	writeCanonString(&b, key)
	b.WriteByte(']')
	return b.String()
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

// writeCanonString writes s as a JSON string the way RFC 8785 does: the
// two-character escapes, \u00XX for the other control characters, every
// other character as itself — and an invalid UTF-8 byte as U+FFFD, as
// ranging over the string decodes it. Runs of characters that need no
// escape are copied whole: every audit event's hash writes its strings
// through here.
func writeCanonString(buf *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	buf.WriteByte('"')
	run := 0 // s[run:i] is still to be copied as it is
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || size != 1 {
				i += size // valid: copied as it is
				continue
			}
		}
		buf.WriteString(s[run:i])
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if c < 0x20 {
				buf.WriteString(`\u00`)
				buf.WriteByte(hexDigits[c>>4])
				buf.WriteByte(hexDigits[c&0xf])
			} else { // an invalid UTF-8 byte
				buf.WriteRune(utf8.RuneError)
			}
		}
		i++
		run = i
	}
	buf.WriteString(s[run:])
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
