package web

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// chainHops bounds how far the operation page follows caused_by and
// supersedes: enough to see a loop or a long replacement history, few
// enough that a page costs a handful of reads.
const chainHops = 10

// causeChain follows caused_by from the operation: its parent (by key, in
// its namespace), the parent's parent, and so on. A parent the viewer may
// not see, or that Handoff never had, ends the chain as a name without a
// link — the same for both, so nothing leaks.
func (s *server) causeChain(ctx context.Context, viewer domain.Actor, op domain.Operation) pages.Chain {
	return walk(op.CausedBy, func(key string) (domain.Operation, string, error) {
		parent, err := s.ledger.Desk.GetByKey(ctx, viewer, op.Namespace, key)
		return parent, parent.CausedBy, err
	})
}

// supersedesChain follows supersedes: the operation this one replaced, the
// one that one replaced, and so on.
func (s *server) supersedesChain(ctx context.Context, viewer domain.Actor, op domain.Operation) pages.Chain {
	return walk(op.Supersedes, func(id string) (domain.Operation, string, error) {
		prev, err := s.ledger.Desk.Get(ctx, viewer, id)
		return prev, prev.Supersedes, err
	})
}

// walk follows one link after another from first, at most chainHops, and
// stops at a link already seen (a loop) or one that cannot be read.
func walk(first string, next func(string) (domain.Operation, string, error)) pages.Chain {
	var c pages.Chain
	var seen []string
	for ref := first; ref != ""; {
		if len(c.Links) == chainHops {
			c.More = true
			break
		}
		if slices.Contains(seen, ref) {
			c.Links = append(c.Links, pages.ChainLink{Name: ref, Loop: true})
			break
		}
		seen = append(seen, ref)
		op, after, err := next(ref)
		if err != nil {
			c.Links = append(c.Links, pages.ChainLink{Name: ref, Missing: true})
			break
		}
		c.Links = append(c.Links, pages.ChainLink{Name: op.Key, ID: op.ID, State: op.State.String()})
		ref = after
	}
	return c
}

// detailFields are an audit event's detail as fields a person reads: each
// member of the object, its value as text, nested values as compact JSON.
// Detail that is not an object is one field, "detail".
func detailFields(raw json.RawMessage) []pages.DetailField {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "{}" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return []pages.DetailField{{Key: "detail", Value: compact(raw)}}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]pages.DetailField, 0, len(keys))
	for _, k := range keys {
		f := pages.DetailField{Key: strings.ReplaceAll(k, "_", " "), Value: readable(m[k])}
		var s string
		if json.Unmarshal(m[k], &s) == nil {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				f.Time = &t
			}
		}
		out = append(out, f)
	}
	return out
}

// detailBudget bounds one detail value on the page; the audit log keeps it
// whole.
const detailBudget = 300

// readable is a JSON value as a person reads it: a string unquoted, an
// object as "name: value; …", a list as "a, b", cut at detailBudget; what
// nests deeper stays compact JSON.
func readable(v json.RawMessage) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) == nil && len(obj) > 0 {
		keys := slices.Sorted(maps.Keys(obj))
		parts := make([]string, 0, len(keys))
		for _, k := range keys {
			if v := compact(obj[k]); v != "" { // an empty code says nothing
				parts = append(parts, strings.ReplaceAll(k, "_", " ")+": "+v)
			}
		}
		return clipToDetailBudget(strings.Join(parts, "; "))
	}
	var list []json.RawMessage
	if json.Unmarshal(v, &list) == nil && len(list) > 0 {
		parts := make([]string, len(list))
		for i, e := range list {
			parts[i] = compact(e)
		}
		return clipToDetailBudget(strings.Join(parts, ", "))
	}
	return compact(v)
}

// compact is a JSON value as short text: a string unquoted, anything else
// as compact JSON, cut at detailBudget.
func compact(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return clipToDetailBudget(s)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return clipToDetailBudget(string(v))
	}
	return clipToDetailBudget(b.String())
}

// clipToDetailBudget cuts s to detailBudget characters, marking the cut.
func clipToDetailBudget(s string) string {
	if r := []rune(s); len(r) > detailBudget {
		return string(r[:detailBudget]) + "…"
	}
	return s
}
