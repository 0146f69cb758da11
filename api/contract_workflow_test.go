package api_test

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestContract_Register(t *testing.T) {
	x := newHarness(t)
	body := map[string]any{"key": "evt_42:crm_task", "type": "crm.task.create", "content": map[string]any{"b": 1.0, "a": "x"},
		"event_id": "evt_42", "source": "shop-webhook", "correlation_id": "run-7", "caused_by": nil, "supersedes": nil, "provider_key": nil}
	r := x.do("POST", "/v1/operations", x.tok, body)
	op := r.ok(201)
	if r.header.Get("Location") != opPath(op, "") || r.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("headers %v", r.header)
	}
	if op["state"] != "received" || op["namespace"] != "campaigns" || op["lease"] != nil || op["result"] != nil ||
		op["caused_by"] != nil || op["content"] != nil || op["links"].(map[string]any)["desk"] != "/desk/operations/"+op["id"].(string) {
		t.Fatalf("operation %v", op)
	}
	if _, err := time.Parse(time.RFC3339, op["created_at"].(string)); err != nil || !strings.HasSuffix(op["created_at"].(string), "Z") {
		t.Fatalf("created_at %v is not RFC 3339 UTC", op["created_at"])
	}
	if _, ok := op["claim"]; ok {
		t.Fatal("claim member without a claim asked")
	}

	t.Run("replay", func(t *testing.T) {
		body := map[string]any{"key": "evt_42:crm_task", "type": "crm.task.create", "content": map[string]any{"a": "x", "b": 1},
			"event_id": "evt_42", "source": "shop-webhook", "correlation_id": "run-7"}
		r := x.do("POST", "/v1/operations", x.tok, body)
		if again := r.ok(200); again["id"] != op["id"] || r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay %v %v", again, r.header)
		}
	})
	t.Run("fingerprint_mismatch", func(t *testing.T) {
		body := map[string]any{"key": "evt_42:crm_task", "type": "crm.task.create", "content": map[string]any{"a": "y"}}
		p := x.do("POST", "/v1/operations", x.tok, body).problem(422, "fingerprint_mismatch")
		if p["operation"].(map[string]any)["id"] != op["id"] {
			t.Fatalf("problem lacks the operation: %v", p)
		}
	})
	t.Run("unknown_type", func(t *testing.T) {
		x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "k1", "type": "nope", "content": map[string]any{}}).problem(422, "unknown_type")
	})
	t.Run("invalid_json", func(t *testing.T) {
		for _, b := range []string{"", "{", `{"key":"k"} {}`, "[]"} {
			x.do("POST", "/v1/operations", x.tok, b).problem(400, "invalid_json")
		}
	})
	t.Run("validation_failed", func(t *testing.T) {
		r := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "bad key!", "type": "", "content": map[string]any{}})
		r.problem(400, "validation_failed")
		if f := r.fields(); !slices.Equal(f, []string{"key", "type"}) {
			t.Fatalf("errors %v", f)
		}
		r = x.do("POST", "/v1/operations", x.tok, `{"key":"k","type":"crm.task.create","content":{},"colour":"red"}`)
		if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"colour"}) {
			t.Fatalf("unknown field: %v", r.fields())
		}
		r = x.do("POST", "/v1/operations", x.tok, `{"key":"k","type":"crm.task.create","content":{},"claim":{"worker":"w","lease_seconds":0}}`)
		if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"claim.lease_seconds"}) {
			t.Fatalf("lease 0: %v", r.fields())
		}
	})
	t.Run("payload_too_large", func(t *testing.T) {
		big := strings.Repeat("x", 70<<10) // content over 64 KiB, body under 256 KiB
		x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "big", "type": "crm.task.create",
			"content": map[string]any{"s": big}}).problem(413, "payload_too_large")
		huge := `{"key":"huge","type":"crm.task.create","content":{"s":"` + strings.Repeat("x", 300<<10) + `"}}`
		x.do("POST", "/v1/operations", x.tok, huge).problem(413, "payload_too_large")
	})
	t.Run("original_unresolved", func(t *testing.T) {
		x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "k2", "type": "crm.task.create",
			"content": map[string]any{}, "supersedes": op["id"]}).problem(409, "original_unresolved")
	})
	t.Run("person forbidden", func(t *testing.T) {
		x.do("POST", "/v1/operations", "alice", body).problem(403, "forbidden")
	})
}

func TestContract_RegisterWithClaim(t *testing.T) {
	x := newHarness(t)
	res := x.register("k", "crm.task.create", map[string]any{"worker": "w-1", "lease_seconds": 60})
	claim := res["claim"].(map[string]any)
	lease := claim["lease"].(map[string]any)
	if res["state"] != "processing" || lease["token"] != 1.0 || lease["worker"] != "w-1" || claim["content"].(map[string]any)["n"] != "k" ||
		claim["provider_key"] != res["provider_key"] || claim["operation"] != nil || res["claim_refused"] != nil {
		t.Fatalf("register+claim %v", res)
	}
	if _, hasToken := res["lease"].(map[string]any)["token"]; hasToken {
		t.Fatal("the operation shows the lease token")
	}
	r := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "k", "type": "crm.task.create",
		"content": map[string]any{"n": "k"}, "claim": map[string]any{"worker": "w-2"}})
	again := r.ok(200)
	if c, present := again["claim"]; !present || c != nil || again["claim_refused"].(map[string]any)["reason"] != "in_progress" {
		t.Fatalf("replay with claim: %v", again)
	}
}

func TestContract_Claim(t *testing.T) {
	x := newHarness(t)
	op := x.register("k", "crm.task.create", nil)
	r := x.do("POST", opPath(op, "claim"), x.tok, map[string]any{"worker": "w-1", "lease_seconds": 30})
	c := r.ok(200)
	if c["operation"].(map[string]any)["state"] != "processing" || c["attempt"].(map[string]any)["number"] != 1.0 ||
		c["content_sha256"] == "" || c["content"].(map[string]any)["n"] != "k" {
		t.Fatalf("claim %v", c)
	}
	x.do("POST", opPath(op, "claim"), x.tok, map[string]any{"worker": "w-1", "lease_seconds": 3601}).problem(400, "validation_failed")
	x.do("POST", opPath(op, "claim"), x.other, map[string]any{"worker": "w-1"}).problem(404, "not_found")
	x.do("POST", "/v1/operations/op_nope/claim", x.tok, map[string]any{"worker": "w-1"}).problem(404, "not_found")
	x.do("POST", opPath(op, "claim"), "alice", map[string]any{"worker": "w-1"}).problem(403, "forbidden")

	pulled := x.register("p", "crm.task.create", nil)
	list := x.do("POST", "/v1/claims", x.tok, map[string]any{"worker": "w-2", "types": []string{"crm.task.create"}, "limit": 10}).ok(200)
	claims := list["claims"].([]any)
	if len(claims) != 1 || claims[0].(map[string]any)["operation"].(map[string]any)["id"] != pulled["id"] {
		t.Fatalf("pull %v", list)
	}
	if empty := x.do("POST", "/v1/claims", x.tok, map[string]any{"worker": "w-2"}).ok(200); len(empty["claims"].([]any)) != 0 {
		t.Fatalf("second pull %v", empty)
	}
	x.do("POST", "/v1/claims", x.tok, map[string]any{"worker": "w-2", "types": []string{"nope"}}).problem(400, "validation_failed")
}

// TestContract_NotClaimable covers each reason of API.md.
func TestContract_NotClaimable(t *testing.T) {
	x := newHarness(t)
	claim := func(op map[string]any) *reply {
		return x.do("POST", opPath(op, "claim"), x.tok, map[string]any{"worker": "w-9"})
	}
	reason := func(r *reply, want string) map[string]any {
		t.Helper()
		p := r.problem(409, "not_claimable")
		if p["reason"] != want || p["operation"] == nil {
			t.Fatalf("reason %v, want %s: %s", p["reason"], want, r.raw)
		}
		return p["operation"].(map[string]any)
	}

	inProgress, _ := x.claimed("in-progress")
	if op := reason(claim(inProgress), "in_progress"); op["lease"].(map[string]any)["expires_at"] == nil {
		t.Fatal("in_progress without the lease expiry")
	}

	done, tok := x.claimed("done")
	x.do("POST", opPath(done, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	x.do("POST", opPath(done, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "completed",
		"result": map[string]any{"ref": "crm_123", "data": map[string]any{"id": 123}}}).ok(200)
	if op := reason(claim(done), "completed"); op["result"].(map[string]any)["ref"] != "crm_123" {
		t.Fatal("completed without the result")
	}

	later, tok := x.claimed("later")
	x.do("POST", opPath(later, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_retryable",
		"error": map[string]any{"class": "rate_limited", "code": "429", "retry_after_seconds": 120}}).ok(200)
	r := claim(later)
	reason(r, "retry_later")
	if ra := r.header.Get("Retry-After"); ra == "" || ra == "0" {
		t.Fatalf("Retry-After %q", ra)
	}

	approval := x.register("approval", "coupon.issue", nil)
	reason(claim(approval), "awaiting_approval")

	reason(claim(x.unknownOutcome("unknown")), "handed_off")

	cancelled := x.register("cancel-me", "coupon.issue", nil)
	x.do("POST", opPath(cancelled, "reject"), "bob", map[string]any{"content_version": 1, "reason": "no"}).ok(200)
	reason(claim(cancelled), "cancelled")
}

func TestContract_WorkerProtocol(t *testing.T) {
	x := newHarness(t)
	op, tok := x.claimed("k")
	x.do("POST", opPath(op, "heartbeat"), x.tok, map[string]any{"lease_token": tok + 1}).problem(409, "stale_lease")
	hb := x.do("POST", opPath(op, "heartbeat"), x.tok, map[string]any{"lease_token": tok, "lease_seconds": 600}).ok(200)
	if exp, _ := time.Parse(time.RFC3339, hb["lease"].(map[string]any)["expires_at"].(string)); time.Until(exp) < 5*time.Minute {
		t.Fatalf("heartbeat did not extend: %v", hb["lease"])
	}
	x.do("POST", opPath(op, "heartbeat"), x.tok, map[string]any{}).problem(400, "validation_failed")
	x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "completed",
		"result": map[string]any{"ref": "r"}}).problem(409, "invalid_transition") // completes only after begin
	x.do("POST", opPath(op, "reconcile"), x.tok, map[string]any{"found": false}).problem(409, "invalid_transition")
	x.do("POST", opPath(op, "begin"), x.tok, map[string]any{"lease_token": 99}).problem(409, "stale_lease")
	if b := x.do("POST", opPath(op, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200); b["state"] != "action_pending" {
		t.Fatalf("begin %v", b)
	}
	r := x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "finished"})
	if r.problem(400, "validation_failed"); !slices.Equal(r.fields(), []string{"outcome"}) {
		t.Fatalf("fields %v", r.fields())
	}
	s := x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_retryable",
		"error": map[string]any{"class": "validation", "code": "422", "message": "owner unknown"}}).ok(200)
	if s["state"] != "failed_terminal" || s["last_error"].(map[string]any)["class"] != "validation" {
		t.Fatalf("the card's terminal class was not applied: %v", s)
	}
	x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "completed",
		"result": map[string]any{"ref": "r"}}).problem(409, "stale_lease")

	u := x.unknownOutcome("u")
	inconclusive := x.do("POST", opPath(u, "reconcile"), x.tok, map[string]any{"found": false, "evidence": "no row"}).ok(200)
	if inconclusive["state"] != "unknown_outcome" {
		t.Fatalf("non-authoritative lookup changed the state: %v", inconclusive)
	}
	found := x.do("POST", opPath(u, "reconcile"), x.tok, map[string]any{"found": true, "result": map[string]any{"ref": "crm_9"},
		"evidence": "GET /tasks → 1 row"}).ok(200)
	if found["state"] != "completed" || found["result"].(map[string]any)["ref"] != "crm_9" {
		t.Fatalf("reconcile found %v", found)
	}
}
