package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/opshandoff/handoff/domain"
)

// encoding/json takes the last of two members with the same name and
// matches member names to fields without regard to case, so
// {"key":"a","KEY":"b"} registers "b" where a gateway in front, reading the
// first or the exact member, sees "a". checkMembers refuses both before
// the body is decoded: a member named twice anywhere, and a member of a
// request object that is not exactly one of its field names.

// checkMembers walks data as the request type t reads it. Syntax errors
// are left to the decoder, which reports them better.
func checkMembers(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walkMembers(dec, t, "")
	if _, ok := err.(*domain.Error); ok {
		return err
	}
	return nil
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// walkMembers reads one value; t is the Go type it decodes into, nil when
// it is kept as it came (json.RawMessage, any): there only duplicates are
// refused.
func walkMembers(dec *json.Decoder, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawMessageType || (t != nil && t.Kind() == reflect.Interface) {
		t = nil
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = jsonFields(t)
		}
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			name, _ := k.(string)
			member := join(path, name)
			if seen[name] {
				return domain.Invalid(domain.FieldError{Field: member, Message: "appears twice"})
			}
			seen[name] = true
			var elem reflect.Type
			switch {
			case fields != nil:
				ft, ok := fields[name]
				if !ok {
					if exact := caseVariant(fields, name); exact != "" {
						return domain.Invalid(domain.FieldError{Field: member,
							Message: "is not a known field (member names are exact: " + exact + ")"})
					}
				}
				elem = ft // nil for an unknown member: the decoder refuses it
			case t != nil && t.Kind() == reflect.Map:
				elem = t.Elem()
			}
			if err := walkMembers(dec, elem, member); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walkMembers(dec, elem, path); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// caseVariant is the field name that name matches only without regard to
// case, "" when none does.
func caseVariant(fields map[string]reflect.Type, name string) string {
	for f := range fields {
		if strings.EqualFold(f, name) {
			return f
		}
	}
	return ""
}

// jsonFields are the member names a struct decodes, with their types, as
// encoding/json names them (embedded structs' fields included).
func jsonFields(t reflect.Type) map[string]reflect.Type {
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
	return out
}
