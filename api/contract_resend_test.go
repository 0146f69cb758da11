package api_test

import (
	"strings"
	"testing"
)

// unknownOf drives key of a one-attempt type to unknown_outcome: claim,
// begin, time out.
func (x *harness) unknownOf(key, typ string) map[string]any {
	x.t.Helper()
	res := x.register(key, typ, map[string]any{"worker": "w-1"})
	tok := res["claim"].(map[string]any)["lease"].(map[string]any)["token"]
	x.do("POST", opPath(res, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	settled := x.do("POST", opPath(res, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "unknown_outcome",
		"error": map[string]any{"class": "timeout", "message": "read timeout"}}).ok(200)
	if settled["state"] != "unknown_outcome" {
		x.t.Fatalf("%s: state %v, want unknown_outcome", key, settled["state"])
	}
	return settled
}

// TestContract_ResendSameKey: POST /v1/operations/{id}/resolve with
// resend_same_key sends an unknown outcome back to be retried under the same
// provider key — only for an operator, with a reason and the version seen,
// and only while the provider deduplicates the key; refused with the reason
// otherwise. POST /v1/batches previews and applies it item by item.
func TestContract_ResendSameKey(t *testing.T) {
	x := newHarness(t)
	u := x.unknownOf("m1", "mail.send") // the one attempt is spent, the key retained for a day
	v := u["version"]
	resolve := func(op map[string]any, bearer string, body map[string]any) *reply {
		return x.do("POST", opPath(op, "resolve"), bearer, body)
	}
	body := func(v any) map[string]any {
		return map[string]any{"action": "resend_same_key", "reason": "the mailer dedups by key", "expected_version": v}
	}
	resolve(u, x.tok, body(v)).problem(403, "forbidden")
	resolve(u, "vera", body(v)).problem(403, "forbidden")
	resolve(u, "alice", map[string]any{"action": "resend_same_key", "expected_version": v}).problem(400, "validation_failed")
	resolve(u, "alice", map[string]any{"action": "resend_same_key", "reason": "r"}).problem(400, "validation_failed")
	resolve(u, "alice", body(v.(float64)-1)).problem(409, "version_conflict")

	r := resolve(u, "alice", body(v)).ok(200)
	res := r["resolution"].(map[string]any)
	last := r["last_error"].(map[string]any)
	if r["state"] != "failed_retryable" || r["provider_key"] != u["provider_key"] || res["action"] != "resend_same_key" ||
		res["by"] != "alice@example.com" || last["code"] != "resend_within_retention" || r["next_retry_at"] == nil {
		t.Fatalf("resend_same_key: %v", r)
	}
	claim := x.do("POST", opPath(u, "claim"), x.tok, map[string]any{"worker": "w-2"}).ok(200)
	if op := claim["operation"].(map[string]any); op["state"] != "processing" || op["provider_key"] != u["provider_key"] {
		t.Fatalf("claim after the re-send: %v", claim)
	}

	// Refused, with the reason, where a re-send could act twice.
	crm := x.unknownOutcome("c1")
	p := resolve(crm, "alice", body(crm["version"])).problem(409, "invalid_transition")
	if !strings.Contains(p["detail"].(string), "does not deduplicate by key") {
		t.Fatalf("no dedup: %v", p)
	}
	brief := x.unknownOf("b1", "mail.brief")
	p = resolve(brief, "alice", body(brief["version"])).problem(409, "invalid_transition")
	if !strings.Contains(p["detail"].(string), "the provider key left its retention window at") {
		t.Fatalf("retention closed: %v", p)
	}

	// A batch applies it where allowed and skips the rest, saying why.
	u2 := x.unknownOf("m2", "mail.send")
	items := []map[string]any{{"id": u2["id"], "expected_version": u2["version"]}, {"id": crm["id"], "expected_version": crm["version"]}}
	batch := map[string]any{"operations": items, "decision": map[string]any{"type": "resolve", "action": "resend_same_key"},
		"reason": "the mailer dedups by key", "preview": true}
	pre := x.do("POST", "/v1/batches", "alice", batch).ok(200)
	got := pre["items"].([]any)
	first, second := got[0].(map[string]any), got[1].(map[string]any)
	if pre["applied"] != 1.0 || first["outcome"] != "apply" || first["to_state"] != "failed_retryable" ||
		second["outcome"] != "skipped" || !strings.Contains(second["reason"].(string), "does not deduplicate by key") {
		t.Fatalf("preview: %v", pre)
	}
	batch["preview"] = false
	done := x.do("POST", "/v1/batches", "alice", batch).ok(200)
	if done["applied"] != 1.0 || done["skipped"] != 1.0 {
		t.Fatalf("batch: %v", done)
	}
	if got := x.do("GET", opPath(u2, ""), x.tok, nil).ok(200); got["state"] != "failed_retryable" {
		t.Fatalf("after the batch: %v", got["state"])
	}
}
