package lookup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/opshandoff/handoff/domain"
)

// Reading is what the rules read from one answer.
type Reading struct {
	Result    domain.LookupResult
	Ref       string
	State     string
	Conflicts []string
	Bound     string // what binds a found record to the operation (domain.BoundByKey, domain.BoundByCompare)
	Note      string // why the answer is not a plain found or not-found
}

// Read applies the adapter's rules to an answer: a found status with the
// when_nonempty value empty is a not-found (a search that matched
// nothing); a found record whose compared fields differ from the content
// is a conflict; one whose provider key (at found.key) is not the
// operation's, one without a reference, or one not in a done state, is
// unsure; a found record is bound to the operation by its provider key at
// found.key or by compare rules that all matched; a not-found status is a not-found; any other status is an error
// (4xx, 5xx) or unsure.
func Read(a domain.LookupAdapter, status int, body []byte, op domain.Operation) Reading {
	switch {
	case slices.Contains(a.NotFoundStatus, status):
		return Reading{Result: domain.LookupNotFound}
	case !slices.Contains(a.Found.Status, status) && status >= 400:
		return Reading{Result: domain.LookupError, Note: "the provider answered " + strconv.Itoa(status)}
	case !slices.Contains(a.Found.Status, status):
		return Reading{Result: domain.LookupUnsure, Note: "the status is neither found nor not found"}
	}
	doc, err := decode(body)
	if err != nil {
		return Reading{Result: domain.LookupUnsure, Note: "the answer is not JSON"}
	}
	if p := a.Found.WhenNonempty; p != "" {
		if v, ok := Pointer(doc, p); !ok || empty(v) {
			return Reading{Result: domain.LookupNotFound, Note: p + " is empty"}
		}
	}
	r := Reading{Result: domain.LookupFoundDone}
	if v, ok := Pointer(doc, a.Found.Ref); ok {
		r.Ref = scalar(v)
	}
	if a.Found.State != "" {
		if v, ok := Pointer(doc, a.Found.State); ok {
			r.State = scalar(v)
		}
	}
	if conflicts, note := compare(a.Found.Compare, doc, op); note != "" {
		r.Result, r.Note = domain.LookupUnsure, note
		return r
	} else if len(conflicts) > 0 {
		r.Result, r.Conflicts = domain.LookupConflict, conflicts
		return r
	} else if len(a.Found.Compare) > 0 {
		r.Bound = domain.BoundByCompare
	}
	if p := a.Found.Key; p != "" {
		v, ok := Pointer(doc, p)
		switch {
		case !ok || scalar(v) == "":
			r.Result, r.Bound, r.Note = domain.LookupUnsure, "", "no provider key at "+p+": the record is not bound to this operation"
			return r
		case scalar(v) != op.ProviderKey:
			r.Result, r.Bound, r.Note = domain.LookupUnsure, "", "the record at "+p+" holds another provider key: it is not this operation's"
			return r
		}
		r.Bound = domain.BoundByKey
	}
	switch {
	case r.Ref == "":
		r.Result, r.Note = domain.LookupUnsure, "no provider reference at "+a.Found.Ref
	case len(a.Found.DoneStates) > 0 && !slices.Contains(a.Found.DoneStates, r.State):
		r.Result, r.Note = domain.LookupUnsure, "the record is not in a done state ("+strings.Join(a.Found.DoneStates, ", ")+")"
	}
	return r
}

// compare lists the answer fields that differ from the content; note says
// why no comparison could be made.
func compare(cmps []domain.LookupCompare, doc any, op domain.Operation) ([]string, string) {
	if len(cmps) == 0 {
		return nil, ""
	}
	if op.ContentPurgedAt != nil || len(op.Content) == 0 {
		return nil, "the content is no longer kept, so the record cannot be compared with it"
	}
	content, err := decode(op.Content)
	if err != nil {
		return nil, "the content is not readable"
	}
	var out []string
	for _, c := range cmps {
		got, okA := Pointer(doc, c.Answer)
		want, okC := Pointer(content, c.Content)
		if !okA || !okC || !equal(got, want) {
			out = append(out, c.Answer)
		}
	}
	return out, ""
}

func decode(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("more than one JSON value")
	}
	return v, nil
}

// Pointer resolves an RFC 6901 JSON pointer in a decoded document.
func Pointer(doc any, p string) (any, bool) { return domain.JSONPointer(doc, p) }

func empty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	case string:
		return x == ""
	}
	return false
}

// scalar is a string or number as text; anything else is "".
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}

// equal compares two decoded JSON values; numbers by value (1 and 1.0 are
// equal), everything else exactly.
func equal(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, okx := new(big.Float).SetString(x.String())
		fy, oky := new(big.Float).SetString(y.String())
		return okx && oky && fx.Cmp(fy) == 0
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !equal(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}
