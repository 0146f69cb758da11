package api_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/opshandoff/handoff/auth"
	"github.com/opshandoff/handoff/domain"
)

// lastEvent is the operation's newest audit event as the store keeps it
// (with the actor's issuer and subject), after checking that the stream is
// gap-free and chained.
func (x *peopleRig) lastEvent(op map[string]any) domain.AuditEvent {
	x.t.Helper()
	events, err := x.store.Timeline(context.Background(), op["id"].(string))
	if err != nil || len(events) == 0 {
		x.t.Fatalf("timeline: %v", err)
	}
	for i, e := range events {
		if e.Seq != int64(i+1) || e.Hash != domain.HashEvent(e) || (i > 0 && e.PrevHash != events[i-1].Hash) {
			x.t.Fatalf("event %d breaks the stream: %+v", i+1, e)
		}
	}
	return events[len(events)-1]
}

// decidedBy checks the operation's last event: the action, the person with
// issuer, subject, email and role, and the reason they gave.
func (x *peopleRig) decidedBy(op map[string]any, action, person string, role domain.Role, reason string) {
	x.t.Helper()
	e := x.lastEvent(op)
	p := x.persons[person]
	if e.Action != action || e.Actor.Kind != domain.ActorPerson || e.Actor.Issuer != x.idp.Issuer() || e.Actor.Subject != p.Subject ||
		e.Actor.Email != p.Email || e.Actor.Role != role || e.Reason != reason || e.Seq != int64(op["version"].(float64)) {
		x.t.Fatalf("last event %+v, want %s by %s (%s) for %q at version %v", e, action, person, role, reason, op["version"])
	}
}

// failedTerminal registers key and settles it as a terminal failure.
func (x *peopleRig) failedTerminal(key string) map[string]any {
	x.t.Helper()
	op, tok := x.claimed(key)
	return x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_terminal",
		"error": map[string]any{"class": "validation", "message": "owner unknown"}}).ok(200)
}

// TestPeople_ResolutionPaths: every human row of PRODUCT.md's table, end to
// end over HTTP with real JWTs, lands in its state with its audit event.
func TestPeople_ResolutionPaths(t *testing.T) {
	x := newPeopleRig(t)
	op := "operator"
	resolve := func(o map[string]any, body map[string]any) map[string]any {
		body["expected_version"] = o["version"]
		return x.do("POST", opPath(o, "resolve"), x.jwt[op], body).ok(200)
	}
	t.Run("unknown_outcome → completed: confirm executed", func(t *testing.T) {
		x.t = t
		done := resolve(x.unknownOutcome("p1"), map[string]any{"action": "confirm_executed", "reason": "task is in the CRM",
			"result": map[string]any{"ref": "crm_77"}})
		if done["state"] != "completed" || done["result"].(map[string]any)["ref"] != "crm_77" {
			t.Fatalf("%v", done)
		}
		x.decidedBy(done, "resolved", op, domain.RoleOperator, "task is in the CRM")
	})
	t.Run("unknown_outcome → received: confirm not executed, retry with the same keys", func(t *testing.T) {
		x.t = t
		u := x.unknownOutcome("p2")
		again := resolve(u, map[string]any{"action": "confirm_not_executed", "then": "retry", "reason": "not in the CRM"})
		if again["state"] != "received" || again["key"] != u["key"] || again["provider_key"] != u["provider_key"] {
			t.Fatalf("%v", again)
		}
		x.decidedBy(again, "resolved", op, domain.RoleOperator, "not in the CRM")
		x.do("POST", opPath(again, "claim"), x.tok, map[string]any{"worker": "w-2"}).ok(200)
	})
	t.Run("unknown_outcome → cancelled: confirm not executed, cancel", func(t *testing.T) {
		x.t = t
		c := resolve(x.unknownOutcome("p3"), map[string]any{"action": "confirm_not_executed", "then": "cancel", "reason": "customer left"})
		if c["state"] != "cancelled" || c["resolution"].(map[string]any)["action"] != "confirm_not_executed+cancel" {
			t.Fatalf("%v", c)
		}
		x.decidedBy(c, "resolved", op, domain.RoleOperator, "customer left")
	})
	t.Run("failed_terminal → received: retry after fix", func(t *testing.T) {
		x.t = t
		r := resolve(x.failedTerminal("p4"), map[string]any{"action": "retry", "reason": "owner exists now"})
		if r["state"] != "received" {
			t.Fatalf("%v", r)
		}
		x.decidedBy(r, "resolved", op, domain.RoleOperator, "owner exists now")
	})
	t.Run("failed_terminal → cancelled", func(t *testing.T) {
		x.t = t
		c := resolve(x.failedTerminal("p5"), map[string]any{"action": "cancel", "reason": "obsolete"})
		if c["state"] != "cancelled" {
			t.Fatalf("%v", c)
		}
		x.decidedBy(c, "resolved", op, domain.RoleOperator, "obsolete")
	})
	t.Run("failed_terminal → revised → approved by someone else → received", func(t *testing.T) {
		x.t = t
		f := x.failedTerminal("p6")
		rev := x.do("POST", opPath(f, "revisions"), x.jwt["approver"], map[string]any{"content": map[string]any{"owner": "u_10"},
			"reason": "fix the owner", "expected_version": f["version"]}).ok(200)
		if rev["state"] != "awaiting_approval" || rev["content_version"] != 2.0 {
			t.Fatalf("%v", rev)
		}
		x.decidedBy(rev, "revised", "approver", domain.RoleApprover, "fix the owner")
		// Four eyes: the reviser cannot approve or reject their own revision,
		// even with a fresh token.
		x.do("POST", opPath(f, "approve"), x.idp.IDToken(t, x.persons["approver"]), map[string]any{"content_version": 2,
			"reason": "mine"}).problem(403, "forbidden")
		x.do("POST", opPath(f, "reject"), x.jwt["approver"], map[string]any{"content_version": 2, "reason": "mine"}).problem(403, "forbidden")
		// The approval of version 1 after version 2 exists is refused.
		x.do("POST", opPath(f, "approve"), x.jwt["approver2"], map[string]any{"content_version": 1, "reason": "old"}).problem(409, "version_conflict")
		x.do("POST", opPath(f, "reject"), x.jwt["approver2"], map[string]any{"content_version": 1, "reason": "old"}).problem(409, "version_conflict")
		ok := x.do("POST", opPath(f, "approve"), x.jwt["approver2"], map[string]any{"content_version": 2, "reason": "checked the owner"}).ok(200)
		if ok["state"] != "received" || ok["approval"].(map[string]any)["by"] != "approver2@example.com" || ok["approval"].(map[string]any)["content_version"] != 2.0 {
			t.Fatalf("%v", ok)
		}
		x.decidedBy(ok, "approved", "approver2", domain.RoleApprover, "checked the owner")
		claim := x.do("POST", opPath(f, "claim"), x.tok, map[string]any{"worker": "w-1"}).ok(200)
		if claim["content"].(map[string]any)["owner"] != "u_10" {
			t.Fatalf("the worker did not get the approved snapshot: %v", claim["content"])
		}
	})
	t.Run("awaiting_approval → received / cancelled", func(t *testing.T) {
		x.t = t
		a := x.register("p7", "coupon.issue", nil)
		ok := x.do("POST", opPath(a, "approve"), x.jwt["admin"], map[string]any{"content_version": 1, "reason": "fine"}).ok(200)
		if ok["state"] != "received" {
			t.Fatalf("%v", ok)
		}
		x.decidedBy(ok, "approved", "admin", domain.RoleAdmin, "fine")
		r := x.register("p8", "coupon.issue", nil)
		no := x.do("POST", opPath(r, "reject"), x.jwt["approver"], map[string]any{"content_version": 1, "reason": "too generous"}).ok(200)
		if no["state"] != "cancelled" {
			t.Fatalf("%v", no)
		}
		x.decidedBy(no, "rejected", "approver", domain.RoleApprover, "too generous")
	})
	t.Run("version_conflict and invalid_transition", func(t *testing.T) {
		x.t = t
		u := x.unknownOutcome("p9")
		stale := u["version"].(float64)
		// A note or an assignment since leaves a decision standing; a
		// decision since makes it stale.
		x.do("POST", opPath(u, "notes"), x.jwt["approver2"], map[string]any{"text": "looking"}).ok(200)
		x.do("POST", opPath(u, "assign"), x.jwt[op], map[string]any{"assignee": nil, "expected_version": stale}).ok(200)
		x.do("POST", opPath(u, "resolve"), x.jwt[op], map[string]any{"action": "confirm_executed", "result": map[string]any{"ref": "r"},
			"reason": "seen", "expected_version": stale}).ok(200)
		x.do("POST", opPath(u, "assign"), x.jwt[op], map[string]any{"assignee": nil, "expected_version": stale}).problem(409, "version_conflict")
		cur := x.do("GET", opPath(u, ""), x.tok, nil).ok(200)
		x.do("POST", opPath(u, "resolve"), x.jwt[op], map[string]any{"action": "cancel", "reason": "give up",
			"expected_version": cur["version"]}).problem(409, "invalid_transition")
		x.do("POST", opPath(u, "revisions"), x.jwt[op], map[string]any{"content": map[string]any{"a": 1}, "reason": "r",
			"expected_version": cur["version"]}).problem(409, "invalid_transition")
		if after := x.do("GET", opPath(u, ""), x.tok, nil).ok(200); after["version"] != cur["version"] || after["state"] != "completed" {
			t.Fatalf("refused decisions changed the operation: %v", after)
		}
	})
}

// TestPeople_CookieIsNotACredential: a live desk session gets nothing from
// /v1; the same person's JWT does.
func TestPeople_CookieIsNotACredential(t *testing.T) {
	x := newPeopleRig(t)
	sessions := auth.NewSessions(x.store, x.store)
	secret, err := sessions.Start(context.Background(), domain.Actor{Kind: domain.ActorPerson, Issuer: x.idp.Issuer(),
		Subject: "sub-admin", Email: "admin@example.com", Role: domain.RoleAdmin}, "oidc")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"handoff_session", "__Host-handoff_session"} {
		x.do("GET", "/v1/operations", "", nil, "Cookie", name+"="+secret).problem(401, "unauthenticated")
		op := x.unknownOutcome("c-" + name[:2])
		x.do("POST", opPath(op, "notes"), "", map[string]any{"text": "x"}, "Cookie", name+"="+secret).problem(401, "unauthenticated")
	}
	list := x.do("GET", "/v1/operations", x.jwt["admin"], nil).ok(200)
	if items, _ := list["items"].([]any); len(items) != 2 {
		t.Fatalf("the admin's JWT lists %d operations", len(items))
	}
}

// TestPeople_Supersedes: a registration naming a cancelled operation links
// both ways, atomically, with an event on the original's stream.
func TestPeople_Supersedes(t *testing.T) {
	x := newPeopleRig(t)
	orig := x.failedTerminal("orig")
	x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "early", "type": "crm.task.create", "content": map[string]any{"n": 1},
		"supersedes": orig["id"]}).problem(409, "original_unresolved")
	cancelled := x.do("POST", opPath(orig, "resolve"), x.jwt["operator"], map[string]any{"action": "cancel", "reason": "wrong owner",
		"expected_version": orig["version"]}).ok(200)
	reg := map[string]any{"key": "replacement", "type": "crm.task.create", "content": map[string]any{"n": 2}, "supersedes": orig["id"]}
	repl := x.do("POST", "/v1/operations", x.tok, reg).ok(201)
	if repl["supersedes"] != orig["id"] {
		t.Fatalf("replacement %v", repl)
	}
	linked := x.do("GET", opPath(orig, ""), x.tok, nil).ok(200)
	if linked["superseded_by"] != repl["id"] || linked["state"] != "cancelled" || linked["version"].(float64) != cancelled["version"].(float64)+1 {
		t.Fatalf("original after: %v", linked)
	}
	e := x.lastEvent(linked)
	var d map[string]any
	_ = json.Unmarshal(e.Detail, &d)
	if e.Action != "superseded" || d["superseded_by"] != repl["id"] || e.Actor.Kind != domain.ActorWorkflow || e.Seq != int64(linked["version"].(float64)) {
		t.Fatalf("original's event: %+v %s", e, e.Detail)
	}
	// A retry of the same registration is a replay, not a second link.
	again := x.do("POST", "/v1/operations", x.tok, reg)
	if again.ok(200)["id"] != repl["id"] || again.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %v", again.body)
	}
	x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "second", "type": "crm.task.create", "content": map[string]any{"n": 3},
		"supersedes": orig["id"]}).problem(409, "original_unresolved")
	x.do("POST", "/v1/operations", x.other, map[string]any{"key": "elsewhere", "type": "crm.task.create", "content": map[string]any{"n": 3},
		"supersedes": orig["id"]}).problem(404, "not_found")
	if final := x.do("GET", opPath(orig, ""), x.tok, nil).ok(200); final["version"] != linked["version"] {
		t.Fatalf("refused registrations moved the original: %v", final)
	}
}
