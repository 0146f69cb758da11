package api_test

import (
	"slices"
	"testing"
)

// TestContract_NULAndBadUnicode: NUL, invalid UTF-8 and lone surrogates
// never give 500. Identifiers and filters are 400 validation_failed naming
// the field, a path ID that no row can have is 404, and what a worker
// relays from its provider is kept with NUL replaced by U+FFFD.
func TestContract_NULAndBadUnicode(t *testing.T) {
	x := newHarness(t)
	reg := func(extra map[string]any) *reply {
		body := map[string]any{"key": "nul", "type": "crm.task.create", "content": map[string]any{"a": 1}}
		for k, v := range extra {
			body[k] = v
		}
		return x.do("POST", "/v1/operations", x.tok, body)
	}
	for _, f := range []string{"source", "correlation_id", "provider_key"} {
		r := reg(map[string]any{f: "a\x00b"})
		if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{f}) {
			t.Errorf("%s with NUL: fields %v", f, r.fields())
		}
	}
	r := reg(map[string]any{"claim": map[string]any{"worker": "w\x00"}})
	if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"claim.worker"}) {
		t.Errorf("claim.worker with NUL: fields %v", r.fields())
	}

	r = x.do("POST", "/v1/events", x.tok, map[string]any{"event_id": "evt_nul", "source": "shop\x00",
		"actions": []any{map[string]any{"action": "task", "type": "crm.task.create", "content": map[string]any{}}}})
	if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"actions[0].source"}) {
		t.Errorf("event source with NUL: fields %v", r.fields())
	}

	op := x.register("k", "crm.task.create", nil)
	r = x.do("POST", opPath(op, "claim"), x.tok, map[string]any{"worker": "\x00"})
	if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"worker"}) {
		t.Errorf("claim worker with NUL: fields %v", r.fields())
	}

	for _, q := range []string{"key", "correlation_id", "event_id", "q", "assignee", "provider"} {
		r := x.do("GET", "/v1/operations?"+q+"=a%00b", x.tok, nil)
		if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{q}) {
			t.Errorf("list filter %s with NUL: fields %v", q, r.fields())
		}
	}
	for _, q := range []string{"operation_id", "actor", "action"} {
		r := x.do("GET", "/v1/audit?"+q+"=op_%00", "vera", nil)
		if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{q}) {
			t.Errorf("audit filter %s with NUL: fields %v", q, r.fields())
		}
	}

	for _, p := range []string{"/v1/operations/op_%00x", "/v1/operations/op_%ffx", "/v1/operations/op_%00x/timeline",
		"/v1/operations/op_%00x/attempts", "/v1/events/%ff", "/v1/events/e%00"} {
		x.do("GET", p, x.tok, nil).problem(404, "not_found")
	}
	x.do("POST", "/v1/operations/op_%00x/claim", x.tok, map[string]any{"worker": "w"}).problem(404, "not_found")

	// A lone surrogate is refused like invalid UTF-8: two different ones
	// must never replay as the same content.
	for _, c := range []string{`{"a":"\ud800"}`, `{"a":"\udc00x"}`, `{"a":"\ud800\ud800"}`} {
		r := x.do("POST", "/v1/operations", x.tok, `{"key":"sur","type":"crm.task.create","content":`+c+`}`)
		if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"content"}) {
			t.Errorf("content %s: fields %v", c, r.fields())
		}
	}
	x.do("POST", "/v1/operations", x.tok, `{"key":"pair","type":"crm.task.create","content":{"a":"\ud83d\ude00"}}`).ok(201)
}

// TestContract_RelayedProviderText: a worker settles whatever its provider
// said. NUL in error.message, error.code and evidence is kept as U+FFFD;
// a result.ref with NUL is refused, naming it.
func TestContract_RelayedProviderText(t *testing.T) {
	x := newHarness(t)
	op, tok := x.claimed("relay")
	x.do("POST", opPath(op, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	r := x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "completed",
		"result": map[string]any{"ref": "crm\x00"}})
	if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"result.ref"}) {
		t.Fatalf("result.ref with NUL: fields %v", r.fields())
	}
	s := x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_retryable",
		"error": map[string]any{"class": "timeout", "code": "E\x00", "message": "upstream said \x00 and \xff"}}).ok(200)
	le := s["last_error"].(map[string]any)
	if le["message"] != "upstream said \uFFFD and \uFFFD" || le["code"] != "E\uFFFD" {
		t.Fatalf("relayed text %q %q", le["message"], le["code"])
	}
	if s["state"] != "unknown_outcome" {
		t.Fatalf("state %v", s["state"])
	}
	rec := x.do("POST", opPath(op, "reconcile"), x.tok, map[string]any{"found": true, "result": map[string]any{"ref": "crm_1",
		"data": map[string]any{"note": "x\x00y"}}, "evidence": "GET /tasks\x00"}).ok(200)
	if rec["state"] != "completed" {
		t.Fatalf("reconcile %v", rec)
	}
	tl := x.do("GET", opPath(op, "timeline"), x.tok, nil).ok(200)
	found := false
	for _, e := range tl["items"].([]any) {
		d, _ := e.(map[string]any)["detail"].(map[string]any)
		if d["evidence"] == "GET /tasks\uFFFD" {
			found = true
		}
	}
	if !found {
		t.Fatalf("evidence not kept with U+FFFD: %v", tl)
	}
}

// TestContract_ValidationBeforeState: a body that can never be right is
// 400 whatever state the operation is in, before any 409.
func TestContract_ValidationBeforeState(t *testing.T) {
	x := newHarness(t)
	op, tok := x.claimed("v")
	r := x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "completed"})
	if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"result.ref"}) {
		t.Fatalf("settle completed without result.ref from processing: fields %v", r.fields())
	}
	r = x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok + 7, "outcome": "completed"})
	if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"result.ref"}) {
		t.Fatalf("settle completed without result.ref on a stale lease: fields %v", r.fields())
	}
	r = x.do("POST", opPath(op, "reconcile"), x.tok, map[string]any{"found": true})
	if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"result.ref"}) {
		t.Fatalf("reconcile found without result.ref from processing: fields %v", r.fields())
	}
}
