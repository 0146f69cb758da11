package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestContract_DrillCredentialStaysInTheDrillNamespace: a drill credential
// acts as a person only inside the drill namespace. Through every REST
// route it can reach — reads, decisions, the batch preview and the batch
// itself — another namespace's operations are neither seen nor decided:
// each answers as if they did not exist, names nothing of them, and
// changes nothing.
func TestContract_DrillCredentialStaysInTheDrillNamespace(t *testing.T) {
	x := newHarness(t)
	ctx := context.Background()
	creds := map[string]string{}
	for _, role := range []domain.Role{domain.RoleOperator, domain.RoleApprover} {
		secret, _, err := x.tokens.CreateDrillPerson(ctx, "drill-"+role.String(), role)
		if err != nil {
			t.Fatal(err)
		}
		creds[role.String()] = secret
	}
	// A real workflow's operations: one in doubt, one awaiting approval.
	doubt := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "evt_41:task", "type": "crm.task.create",
		"event_id": "evt_41", "content": map[string]any{"title": "secret-title"}, "claim": map[string]any{"worker": "w-1"}}).ok(201)
	tok := doubt["claim"].(map[string]any)["lease"].(map[string]any)["token"]
	x.do("POST", opPath(doubt, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	doubt = x.do("POST", opPath(doubt, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "unknown_outcome",
		"error": map[string]any{"class": "timeout", "message": "read timeout"}}).ok(200)
	held := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "evt_42:coupon", "type": "coupon.issue",
		"event_id": "evt_42", "content": map[string]any{"code": "secret-code"}}).ok(201)
	real := []map[string]any{doubt, held}
	ghost := map[string]any{"id": "op_01M8SFD2J2XZEEPP332T73P3CW"} // no such operation

	for role, cred := range creds {
		for _, op := range real {
			id := op["id"].(string)
			for _, r := range []struct{ method, path string }{{"GET", "/v1/operations/" + id},
				{"GET", "/v1/operations/" + id + "/attempts"}, {"GET", "/v1/operations/" + id + "/timeline"}} {
				x.do(r.method, r.path, cred, nil).problem(404, "not_found")
			}
			v := op["version"]
			for action, body := range map[string]map[string]any{
				"resolve":   {"action": "confirm_not_executed", "then": "retry", "reason": "drill", "expected_version": v},
				"assign":    {"assignee": nil, "reason": "drill", "expected_version": v},
				"notes":     {"text": "drill"},
				"revisions": {"content": map[string]any{"code": "drill"}, "reason": "drill", "expected_version": v},
				"approve":   {"content_version": 1, "reason": "drill", "expected_version": v},
				"reject":    {"content_version": 1, "reason": "drill", "expected_version": v},
			} {
				// As for an operation that does not exist: not found, or
				// refused for the role before any operation is looked at.
				r, none := x.do("POST", opPath(op, action), cred, body), x.do("POST", opPath(ghost, action), cred, body)
				if r.code != none.code || r.body["code"] != none.body["code"] || (r.code != 404 && r.code != 403) {
					t.Fatalf("%s: %s on another namespace's %s answered %d %s; on none %d %s", role, action, op["key"], r.code, r.raw, none.code, none.raw)
				}
			}
			// The batch, previewed and applied: every item skipped as not
			// found, nothing about it named.
			for _, preview := range []bool{true, false} {
				for _, decision := range []map[string]any{{"type": "resolve", "action": "confirm_not_executed", "then": "retry"},
					{"type": "note"}, {"type": "assign", "assignee": nil}} {
					b := x.do("POST", "/v1/batches", cred, map[string]any{"operations": []any{map[string]any{"id": id, "expected_version": v}},
						"decision": decision, "reason": "drill", "preview": preview})
					if b.code == 403 {
						continue // refused whole: nothing reached
					}
					res := b.ok(200)
					item := res["items"].([]any)[0].(map[string]any)
					if res["applied"] != 0.0 || item["outcome"] != "skipped" || item["code"] != "not_found" || item["key"] != nil || item["from_state"] != nil ||
						strings.Contains(string(b.raw), op["key"].(string)) {
						t.Fatalf("%s: batch %v (preview %v) on another namespace's %s: %s", role, decision["type"], preview, op["key"], b.raw)
					}
				}
			}
		}
		list := x.do("GET", "/v1/operations?limit=200", cred, nil).ok(200)
		if items := list["items"].([]any); len(items) != 0 {
			t.Fatalf("%s lists %d operations of other namespaces", role, len(items))
		}
		if r := x.do("GET", "/v1/operations?namespace=campaigns", cred, nil); r.code == 200 && len(r.body["items"].([]any)) != 0 {
			t.Fatalf("%s lists campaigns by asking for it: %s", role, r.raw)
		}
		if r := x.do("GET", "/v1/events/evt_41", cred, nil); r.code == 200 && strings.Contains(string(r.raw), "evt_41:task") {
			t.Fatalf("%s reads another namespace's event: %s", role, r.raw)
		}
		for _, path := range []string{"/v1/audit", "/v1/audit/export"} {
			r := x.do("GET", path, cred, nil)
			if r.code == 200 && (strings.Contains(string(r.raw), doubt["id"].(string)) || strings.Contains(string(r.raw), held["id"].(string))) {
				t.Fatalf("%s reads another namespace's audit on %s: %s", role, path, r.raw)
			}
		}
	}
	// A person of the desk does see that audit trail: the drill
	// credential's empty one is its namespace's.
	if a := x.do("GET", "/v1/audit", "alice", nil); !strings.Contains(string(a.raw), doubt["id"].(string)) {
		t.Fatalf("the control: alice's audit trail lacks %s: %s", doubt["id"], a.raw)
	}
	// The same credential does reach the drill's own operations: the
	// refusals above are the namespace's, not the credential's.
	drill := x.token(domain.DrillNamespace, "drill")
	own := x.do("POST", "/v1/operations", drill, map[string]any{"key": "drill-1:task", "type": "crm.task.create",
		"content": map[string]any{"title": "drill"}, "claim": map[string]any{"worker": "w-1"}}).ok(201)
	tok = own["claim"].(map[string]any)["lease"].(map[string]any)["token"]
	x.do("POST", opPath(own, "begin"), drill, map[string]any{"lease_token": tok}).ok(200)
	own = x.do("POST", opPath(own, "settle"), drill, map[string]any{"lease_token": tok, "outcome": "unknown_outcome",
		"error": map[string]any{"class": "timeout", "message": "read timeout"}}).ok(200)
	x.do("GET", opPath(own, ""), creds["operator"], nil).ok(200)
	b := x.do("POST", "/v1/batches", creds["operator"], map[string]any{"operations": []any{map[string]any{"id": own["id"], "expected_version": own["version"]}},
		"decision": map[string]any{"type": "resolve", "action": "confirm_not_executed", "then": "retry"}, "reason": "drill", "preview": true}).ok(200)
	if b["applied"] != 1.0 {
		t.Fatalf("the drill operator's preview of a drill operation: %v", b)
	}
	// Nothing changed.
	for _, op := range real {
		now := x.do("GET", opPath(op, ""), "alice", nil).ok(200)
		if now["version"] != op["version"] || now["state"] != op["state"] {
			t.Fatalf("%s changed: %v → %v (%v → %v)", op["key"], op["state"], now["state"], op["version"], now["version"])
		}
	}
}
