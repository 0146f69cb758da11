package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestAssign_ResolvesThePerson: /v1 assign and a batch's assign take the
// assignee as an identity and resolve it to someone who signed in with a
// role that can decide. Someone unknown, or an email two people share at
// different identity providers, is a 400 on the assignee field and changes
// nothing; a known person is stored with their issuer and subject, and the
// audit event names them so.
func TestAssign_ResolvesThePerson(t *testing.T) {
	x := newPeopleRig(t)
	op := x.jwt["operator"]
	// One email at two identity providers: two people.
	x.signIn(domain.Actor{Kind: domain.ActorPerson, Issuer: x.idp.Issuer(), Subject: "sub-sam", Email: "sam@example.com", Role: domain.RoleOperator})
	x.signIn(domain.Actor{Kind: domain.ActorPerson, Issuer: "https://other.example.com", Subject: "sam", Email: "Sam@example.com", Role: domain.RoleOperator})

	u := x.unknownOutcome("assign-1")
	for who, want := range map[string]string{"nobody@example.com": "never signed in", "sam@example.com": "names 2 people",
		"viewer@example.com": "cannot decide"} {
		r := x.do("POST", opPath(u, "assign"), op, map[string]any{"assignee": who, "reason": "r", "expected_version": u["version"]})
		body := r.problem(400, "validation_failed")
		if f := r.fields(); len(f) != 1 || f[0] != "assignee" || !strings.Contains(fmt.Sprint(body["detail"]), want) {
			t.Fatalf("%s: %v %s", who, f, r.raw)
		}
	}
	if after := x.do("GET", opPath(u, ""), x.tok, nil).ok(200); after["version"] != u["version"] || after["assignee"] != nil {
		t.Fatalf("a refused assignment changed the operation: %v", after)
	}

	got := x.do("POST", opPath(u, "assign"), op, map[string]any{"assignee": "APPROVER@example.com", "reason": "lead",
		"expected_version": u["version"]}).ok(200)
	if got["assignee"] != "approver@example.com" {
		t.Fatalf("assignee %v", got["assignee"])
	}
	x.assignedTo(u, "sub-approver")

	// A batch: the same refusals, on decision.assignee, then the person.
	v := x.unknownOutcome("assign-2")
	batch := func(who string) *reply {
		return x.do("POST", "/v1/batches", op, map[string]any{"operations": []any{map[string]any{"id": v["id"], "expected_version": v["version"]}},
			"decision": map[string]any{"type": "assign", "assignee": who}, "reason": "on call"})
	}
	for _, who := range []string{"nobody@example.com", "sam@example.com"} {
		r := batch(who)
		r.problem(400, "validation_failed")
		if f := r.fields(); len(f) != 1 || f[0] != "decision.assignee" {
			t.Fatalf("batch %s: %v %s", who, f, r.raw)
		}
	}
	if after := x.do("GET", opPath(v, ""), x.tok, nil).ok(200); after["version"] != v["version"] {
		t.Fatalf("a refused batch changed the operation: %v", after)
	}
	if res := batch("approver@example.com").ok(200); res["applied"] != float64(1) {
		t.Fatalf("batch: %v", res)
	}
	x.assignedTo(v, "sub-approver")
}

// assignedTo checks that op is stored as assigned to the person with the
// rig's issuer and subject, and that its last audit event says so.
func (x *peopleRig) assignedTo(op map[string]any, subject string) {
	x.t.Helper()
	stored, _, err := x.store.Load(context.Background(), "", op["id"].(string))
	if err != nil || stored.AssigneeIssuer != x.idp.Issuer() || stored.AssigneeSubject != subject {
		x.t.Fatalf("stored assignee %q %q %q %v", stored.Assignee, stored.AssigneeIssuer, stored.AssigneeSubject, err)
	}
	e := x.lastEvent(map[string]any{"id": op["id"], "version": float64(stored.Version)})
	var d map[string]string
	_ = json.Unmarshal(e.Detail, &d)
	if e.Action != "assigned" || d["to_issuer"] != x.idp.Issuer() || d["to_subject"] != subject {
		x.t.Fatalf("audit %s %s", e.Action, e.Detail)
	}
}
