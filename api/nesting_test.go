package api_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestContract_ContentNestedTooDeep: content nested deeper than 64 levels is
// 400 validation_failed naming the path of the first value too deep, on
// registration and on event actions; 64 levels register.
func TestContract_ContentNestedTooDeep(t *testing.T) {
	x := newHarness(t)
	deep := func(levels int) json.RawMessage { // the content object is level 1
		return json.RawMessage(strings.Repeat(`{"a":`, levels-1) + `{}` + strings.Repeat(`}`, levels-1))
	}
	x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "deep-64", "type": "crm.task.create", "content": deep(64)}).ok(201)

	for _, levels := range []int{65, 9990} {
		r := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "deep-too", "type": "crm.task.create", "content": deep(levels)})
		r.problem(400, "validation_failed")
		want := "content" + strings.Repeat(".a", 64)
		if f := r.fields(); len(f) != 1 || f[0] != want {
			t.Fatalf("%d levels: fields %v, want [%s]", levels, f, want)
		}
	}
	x.do("GET", "/v1/operations?key=deep-too", x.tok, nil).ok(200)
	if got := x.do("GET", "/v1/operations?key=deep-too", x.tok, nil).body["items"]; got != nil && len(got.([]any)) != 0 {
		t.Fatalf("a refused registration left an operation: %v", got)
	}

	r := x.do("POST", "/v1/events", x.tok, map[string]any{"event_id": "ev-deep", "actions": []any{
		map[string]any{"action": "task", "type": "crm.task.create", "content": map[string]any{"list": []any{deep(64)}}}}})
	r.problem(400, "validation_failed")
	if f := r.fields(); len(f) != 1 || f[0] != "actions[0].content.list[0]"+strings.Repeat(".a", 62) {
		t.Fatalf("event action: fields %v", f)
	}
}
