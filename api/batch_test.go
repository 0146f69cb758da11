package api_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPeople_Batch: POST /v1/batches previews a retry of an incident's
// items, then applies it; the item someone changed in between is skipped
// with version_conflict, the others share the batch_id in their timeline.
// A workflow token, an unknown member, a confirm_executed and too many
// items are refused whole.
func TestPeople_Batch(t *testing.T) {
	x := newPeopleRig(t)
	var ops []map[string]any
	var items []map[string]any
	for _, k := range []string{"b1", "b2", "b3"} {
		o := x.failedTerminal(k)
		ops = append(ops, o)
		items = append(items, map[string]any{"id": o["id"], "expected_version": o["version"]})
	}
	body := map[string]any{"operations": items, "decision": map[string]any{"type": "resolve", "action": "retry"},
		"reason": "the mailer is back", "preview": true}
	pre := x.do("POST", "/v1/batches", x.jwt["operator"], body).ok(200)
	if pre["applied"] != float64(3) || pre["skipped"] != float64(0) || pre["preview"] != true {
		t.Fatalf("preview: %v", pre)
	}
	for _, it := range pre["items"].([]any) {
		if m := it.(map[string]any); m["outcome"] != "apply" || m["to_state"] != "received" {
			t.Fatalf("preview item: %v", m)
		}
	}
	// b2 is cancelled by someone else after the preview.
	x.do("POST", opPath(ops[1], "resolve"), x.jwt["approver2"], map[string]any{"action": "cancel", "reason": "withdrawn",
		"expected_version": ops[1]["version"]}).ok(200)
	body["preview"] = false
	res := x.do("POST", "/v1/batches", x.jwt["operator"], body).ok(200)
	got := res["items"].([]any)
	if res["applied"] != float64(2) || res["skipped"] != float64(1) || got[1].(map[string]any)["code"] != "version_conflict" ||
		!strings.Contains(got[1].(map[string]any)["reason"].(string), "resolved by") {
		t.Fatalf("apply: %v", res)
	}
	for _, i := range []int{0, 2} {
		e := x.lastEvent(ops[i])
		var d map[string]any
		_ = json.Unmarshal(e.Detail, &d)
		if e.Action != "resolved" || d["batch_id"] != res["batch_id"] || e.Reason != "the mailer is back" {
			t.Fatalf("item %d's event: %+v", i, e)
		}
	}

	x.do("POST", "/v1/batches", x.tok, body).problem(403, "forbidden")
	x.do("POST", "/v1/batches", x.jwt["operator"], map[string]any{"operations": items, "decision": map[string]any{"type": "note"},
		"reason": "x", "surprise": 1}).problem(400, "validation_failed")
	x.do("POST", "/v1/batches", x.jwt["operator"], map[string]any{"operations": items,
		"decision": map[string]any{"type": "resolve", "action": "confirm_executed"}, "reason": "x"}).problem(400, "validation_failed")
	many := make([]map[string]any, 1001)
	for i := range many {
		many[i] = map[string]any{"id": "op_x", "expected_version": 1}
	}
	x.do("POST", "/v1/batches", x.jwt["operator"], map[string]any{"operations": many, "decision": map[string]any{"type": "note"},
		"reason": "x"}).problem(400, "validation_failed")
}
