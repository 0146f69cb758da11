package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"

	"github.com/opshandoff/handoff/domain"
)

// encoding/json takes the last of two members with the same name and
// matches member names to fields without regard to case, so
// {"key":"a","KEY":"b"} registers "b" where a gateway in front, reading the
// first or the exact member, sees "a". checkMembers refuses both before
// the body is decoded: a member named twice anywhere, and a member of a
// request object that is not exactly one of its field names.
//
// It scans the bytes itself rather than through json.Decoder.Token, which
// allocates for every token: this runs on every call of the hot path.

// checkMembers scans data as the request type t reads it. Malformed JSON
// is left to the decoder, which reports it better.
func checkMembers(data []byte, t reflect.Type) error {
	s := memberScan{data: data}
	err := s.value(t)
	var e *domain.Error
	if errors.As(err, &e) {
		return err
	}
	return nil
}

// errMalformed stops a scan of what the decoder will refuse anyway.
var errMalformed = errors.New("malformed JSON")

type memberScan struct {
	data []byte
	i    int
	path [][]byte // the members from the top to the value being read
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// value reads one value; t is the Go type it decodes into, nil when it is
// kept as it came (json.RawMessage, any): there only duplicates are refused.
func (s *memberScan) value(t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || (t != nil && t.Kind() == reflect.Interface) {
		t = nil
	}
	s.space()
	if s.i >= len(s.data) {
		return errMalformed
	}
	switch s.data[s.i] {
	case '{':
		return s.object(t)
	case '[':
		s.i++
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for first := true; ; first = false {
			s.space()
			if s.i < len(s.data) && s.data[s.i] == ']' {
				s.i++
				return nil
			}
			if !first && !s.expect(',') {
				return errMalformed
			}
			if err := s.value(elem); err != nil {
				return err
			}
		}
	case '"':
		_, _, err := s.str()
		return err
	}
	// A number or a literal: up to the next delimiter.
	for s.i < len(s.data) && !delimiter(s.data[s.i]) {
		s.i++
	}
	return nil
}

func delimiter(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

func (s *memberScan) object(t reflect.Type) error {
	s.i++
	var fields map[string]reflect.Type
	if t != nil && t.Kind() == reflect.Struct {
		fields = jsonFields(t)
	}
	var small [8][]byte
	seen := small[:0]
	for first := true; ; first = false {
		s.space()
		if s.i < len(s.data) && s.data[s.i] == '}' {
			s.i++
			return nil
		}
		if !first && !s.expect(',') {
			return errMalformed
		}
		s.space()
		name, escaped, err := s.str()
		if err != nil {
			return err
		}
		if escaped {
			var n string
			if json.Unmarshal(name, &n) != nil {
				return errMalformed
			}
			name = []byte(n)
		} else {
			name = name[1 : len(name)-1]
		}
		for _, o := range seen {
			if bytes.Equal(o, name) {
				return s.refuse(name, "appears twice")
			}
		}
		seen = append(seen, name)
		var elem reflect.Type
		switch {
		case fields != nil:
			ft, ok := fields[string(name)]
			if !ok {
				for f := range fields {
					if strings.EqualFold(f, string(name)) {
						return s.refuse(name, "is not a known field (member names are exact: "+f+")")
					}
				}
			}
			elem = ft // nil for an unknown member: the decoder refuses it
		case t != nil && t.Kind() == reflect.Map:
			elem = t.Elem()
		}
		s.space()
		if !s.expect(':') {
			return errMalformed
		}
		s.path = append(s.path, name)
		err = s.value(elem)
		s.path = s.path[:len(s.path)-1]
		if err != nil {
			return err
		}
	}
}

// refuse is the problem of the member name of the object being read.
func (s *memberScan) refuse(name []byte, message string) error {
	field := string(bytes.Join(append(append([][]byte{}, s.path...), name), []byte(".")))
	return domain.Invalid(domain.FieldError{Field: field, Message: message})
}

// str reads a string, quotes included; escaped says whether it holds a
// backslash escape.
func (s *memberScan) str() (raw []byte, escaped bool, err error) {
	if s.i >= len(s.data) || s.data[s.i] != '"' {
		return nil, false, errMalformed
	}
	start := s.i
	for s.i++; s.i < len(s.data); s.i++ {
		switch s.data[s.i] {
		case '\\':
			escaped = true
			s.i++
		case '"':
			s.i++
			return s.data[start:s.i], escaped, nil
		}
	}
	return nil, false, errMalformed
}

func (s *memberScan) space() {
	for s.i < len(s.data) && (s.data[s.i] == ' ' || s.data[s.i] == '\t' || s.data[s.i] == '\r' || s.data[s.i] == '\n') {
		s.i++
	}
}

func (s *memberScan) expect(c byte) bool {
	if s.i < len(s.data) && s.data[s.i] == c {
		s.i++
		return true
	}
	return false
}

// fieldCache holds jsonFields per request type.
var fieldCache sync.Map // reflect.Type → map[string]reflect.Type

// jsonFields are the member names a struct decodes, with their types, as
// encoding/json names them (embedded structs' fields included).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	if v, ok := fieldCache.Load(t); ok {
		return v.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for n, typ := range jsonFields(ft) {
					if _, ok := out[n]; !ok {
						out[n] = typ
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	fieldCache.Store(t, out)
	return out
}
