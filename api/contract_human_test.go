package api_test

import (
	"testing"
)

func TestContract_HumanActions(t *testing.T) {
	x := newHarness(t)
	u := x.unknownOutcome("u")
	v := u["version"]
	resolve := func(bearer string, body map[string]any) *reply {
		return x.do("POST", opPath(u, "resolve"), bearer, body)
	}

	resolve(x.tok, map[string]any{"action": "confirm_executed", "reason": "seen", "expected_version": v,
		"result": map[string]any{"ref": "crm_1"}}).problem(403, "forbidden")
	resolve("vera", map[string]any{"action": "confirm_executed", "reason": "seen", "expected_version": v,
		"result": map[string]any{"ref": "crm_1"}}).problem(403, "forbidden")
	resolve("alice", map[string]any{"action": "confirm_executed", "reason": "seen"}).problem(400, "validation_failed")
	resolve("alice", map[string]any{"action": "cancel", "reason": "no", "expected_version": v}).problem(409, "invalid_transition")
	resolve("alice", map[string]any{"action": "confirm_executed", "reason": "seen", "expected_version": v.(float64) - 1,
		"result": map[string]any{"ref": "crm_1"}}).problem(409, "version_conflict")
	done := resolve("alice", map[string]any{"action": "confirm_executed", "reason": "seen in the CRM", "expected_version": v,
		"result": map[string]any{"ref": "crm_1"}}).ok(200)
	res := done["resolution"].(map[string]any)
	if done["state"] != "completed" || res["by"] != "alice@example.com" || res["action"] != "confirm_executed" {
		t.Fatalf("resolved %v", done)
	}
	x.do("POST", opPath(u, "resolve"), "alice", map[string]any{"action": "retry", "reason": "again",
		"expected_version": done["version"]}).problem(409, "invalid_transition")

	t.Run("confirm not executed then retry", func(t *testing.T) {
		u := x.unknownOutcome("u2")
		r := x.do("POST", opPath(u, "resolve"), "alice", map[string]any{"action": "confirm_not_executed", "then": "retry",
			"reason": "not in the CRM", "expected_version": u["version"]}).ok(200)
		if r["state"] != "received" || r["provider_key"] != u["provider_key"] {
			t.Fatalf("retry %v", r)
		}
	})
	t.Run("assign and note", func(t *testing.T) {
		u := x.unknownOutcome("u3")
		a := x.do("POST", opPath(u, "assign"), "alice", map[string]any{"assignee": "alice@example.com",
			"expected_version": u["version"]}).ok(200)
		if a["assignee"] != "alice@example.com" {
			t.Fatalf("assign %v", a)
		}
		x.do("POST", opPath(u, "assign"), "alice", map[string]any{"expected_version": a["version"]}).problem(400, "validation_failed")
		un := x.do("POST", opPath(u, "assign"), "alice", map[string]any{"assignee": nil, "expected_version": a["version"]}).ok(200)
		if un["assignee"] != nil {
			t.Fatalf("unassign %v", un)
		}
		x.do("POST", opPath(u, "notes"), "alice", map[string]any{"text": "called the provider"}).ok(200)
		x.do("POST", opPath(u, "notes"), "alice", map[string]any{"text": ""}).problem(400, "validation_failed")
		x.do("POST", opPath(u, "notes"), x.tok, map[string]any{"text": "x"}).problem(403, "forbidden")
		x.do("POST", opPath(u, "notes"), "alice", map[string]any{"text": "x", "expected_version": 1}).problem(409, "version_conflict")
	})
	t.Run("revise, four eyes, approve", func(t *testing.T) {
		op, tok := x.claimed("rev")
		failed := x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_terminal",
			"error": map[string]any{"class": "validation", "message": "owner unknown"}}).ok(200)
		x.do("POST", opPath(op, "revisions"), "alice", map[string]any{"content": nil, "reason": "fix",
			"expected_version": failed["version"]}).problem(400, "validation_failed")
		rev := x.do("POST", opPath(op, "revisions"), "bob", map[string]any{"content": map[string]any{"owner": "u_10"},
			"reason": "fix the owner", "expected_version": failed["version"]}).ok(200)
		if rev["state"] != "awaiting_approval" || rev["content_version"] != 2.0 {
			t.Fatalf("revised %v", rev)
		}
		x.do("POST", opPath(op, "approve"), "bob", map[string]any{"content_version": 2, "reason": "ok"}).problem(403, "forbidden")
		x.do("POST", opPath(op, "approve"), "alice", map[string]any{"content_version": 2, "reason": "ok"}).problem(403, "forbidden")
		x.do("POST", opPath(op, "approve"), "carol", map[string]any{"content_version": 1, "reason": "ok"}).problem(409, "version_conflict")
		ok := x.do("POST", opPath(op, "approve"), "carol", map[string]any{"content_version": 2, "reason": "ok"}).ok(200)
		if ok["state"] != "received" || ok["approval"].(map[string]any)["by"] != "carol@example.com" {
			t.Fatalf("approved %v", ok)
		}
		x.do("POST", opPath(op, "reject"), "carol", map[string]any{"content_version": 2, "reason": "no"}).problem(409, "invalid_transition")
		got := x.do("GET", opPath(op, ""), x.tok, nil).ok(200)
		if got["content"].(map[string]any)["owner"] != "u_10" {
			t.Fatalf("content after revision %v", got["content"])
		}
	})
	t.Run("revision content too large", func(t *testing.T) {
		op := x.register("big-rev", "crm.task.create", nil)
		big := make([]byte, 70<<10)
		for i := range big {
			big[i] = 'x'
		}
		x.do("POST", opPath(op, "revisions"), "alice", map[string]any{"content": map[string]any{"s": string(big)},
			"reason": "r", "expected_version": op["version"]}).problem(413, "payload_too_large")
	})
}
