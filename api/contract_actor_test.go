package api_test

import "testing"

// TestContract_ActorIssuerAndSubject: the timeline and /v1/audit name a
// person as their identity provider does — issuer and subject — as the
// audit export already does, not only by the email claim.
func TestContract_ActorIssuerAndSubject(t *testing.T) {
	x := newHarness(t)
	op := x.register("k", "crm.task.create", nil)
	x.do("POST", opPath(op, "notes"), "ivy", map[string]any{"text": "looking", "expected_version": op["version"]}).ok(200)
	check := func(where string, events []any) {
		t.Helper()
		for _, e := range events {
			a := e.(map[string]any)["actor"].(map[string]any)
			if a["kind"] == "person" {
				if a["issuer"] != "https://idp.example.com" || a["subject"] != "u-ivy" || a["email"] != "ivy@example.com" {
					t.Fatalf("%s: person actor %v", where, a)
				}
				return
			}
		}
		t.Fatalf("%s: no person event in %v", where, events)
	}
	check("timeline", x.do("GET", opPath(op, "timeline"), x.tok, nil).ok(200)["items"].([]any))
	check("audit", x.do("GET", "/v1/audit?operation_id="+op["id"].(string), "vera", nil).ok(200)["items"].([]any))
}
