package api_test

import (
	"testing"
)

// TestContract_SettleReplay: a settle sent again after it committed (its
// answer lost) is answered 200 with the operation, Idempotent-Replayed:
// true, and writes nothing; any other settle with that token, or one with
// a token that never settled, is 409 stale_lease.
func TestContract_SettleReplay(t *testing.T) {
	x := newHarness(t)
	events := func(op map[string]any) int {
		return len(x.do("GET", opPath(op, "timeline"), x.tok, nil).ok(200)["items"].([]any))
	}
	replayed := func(r *reply, first map[string]any) {
		t.Helper()
		again := r.ok(200)
		if r.header.Get("Idempotent-Replayed") != "true" || again["id"] != first["id"] ||
			again["version"] != first["version"] || again["state"] != first["state"] {
			t.Fatalf("replay %v %v, first %v", again, r.header, first)
		}
	}

	t.Run("completed", func(t *testing.T) {
		op, tok := x.claimed("replay-done")
		x.do("POST", opPath(op, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
		body := map[string]any{"lease_token": tok, "outcome": "completed",
			"result": map[string]any{"ref": "task_1", "data": map[string]any{"a": 1, "b": []any{"x"}}}}
		r := x.do("POST", opPath(op, "settle"), x.tok, body)
		first := r.ok(200)
		if first["state"] != "completed" || r.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("first settle %v %v", first, r.header)
		}
		n := events(op)
		// The same settle, its data's members in another order.
		same := map[string]any{"lease_token": tok, "outcome": "completed",
			"result": map[string]any{"data": map[string]any{"b": []any{"x"}, "a": 1.0}, "ref": "task_1"}}
		replayed(x.do("POST", opPath(op, "settle"), x.tok, same), first)
		replayed(x.do("POST", opPath(op, "settle"), x.tok, body), first)
		for name, other := range map[string]map[string]any{
			"another ref": {"lease_token": tok, "outcome": "completed", "result": map[string]any{"ref": "task_2",
				"data": map[string]any{"a": 1, "b": []any{"x"}}}},
			"another result": {"lease_token": tok, "outcome": "completed", "result": map[string]any{"ref": "task_1",
				"data": map[string]any{"a": 2, "b": []any{"x"}}}},
			"no result data":  {"lease_token": tok, "outcome": "completed", "result": map[string]any{"ref": "task_1"}},
			"another outcome": {"lease_token": tok, "outcome": "unknown_outcome", "error": map[string]any{"class": "timeout"}},
			"another token":   {"lease_token": tok + 1, "outcome": "completed", "result": body["result"]},
		} {
			r := x.do("POST", opPath(op, "settle"), x.tok, other)
			if r.problem(409, "stale_lease"); r.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("%s: %v", name, r.header)
			}
		}
		if got := events(op); got != n {
			t.Fatalf("replays wrote %d audit events", got-n)
		}
		if now := x.do("GET", opPath(op, ""), x.tok, nil).ok(200); now["version"] != first["version"] {
			t.Fatalf("version moved: %v, was %v", now["version"], first["version"])
		}
		// Another namespace's workflow learns nothing from a replay.
		x.do("POST", opPath(op, "settle"), x.other, body).problem(404, "not_found")
	})

	t.Run("failed", func(t *testing.T) {
		op, tok := x.claimed("replay-failed")
		body := map[string]any{"lease_token": tok, "outcome": "failed_retryable",
			"error": map[string]any{"class": "rate_limited", "code": "429", "message": "slow down", "retry_after_seconds": 30}}
		first := x.do("POST", opPath(op, "settle"), x.tok, body).ok(200)
		n := events(op)
		// The message and the retry-after describe the failure; the same
		// settle may word it otherwise.
		replayed(x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_retryable",
			"error": map[string]any{"class": "rate_limited", "code": "429", "message": "slow down!"}}), first)
		for _, other := range []map[string]any{
			{"lease_token": tok, "outcome": "failed_retryable", "error": map[string]any{"class": "rate_limited", "code": "503"}},
			{"lease_token": tok, "outcome": "failed_retryable", "error": map[string]any{"class": "transient", "code": "429"}},
			{"lease_token": tok, "outcome": "failed_terminal", "error": map[string]any{"class": "rate_limited", "code": "429"}},
		} {
			x.do("POST", opPath(op, "settle"), x.tok, other).problem(409, "stale_lease")
		}
		if got := events(op); got != n {
			t.Fatalf("replays wrote %d audit events", got-n)
		}
	})

	t.Run("never_settled", func(t *testing.T) {
		// A token whose lease was given back never settled: nothing to replay.
		op, tok := x.claimed("replay-none")
		x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok + 7, "outcome": "failed_retryable",
			"error": map[string]any{"class": "rate_limited"}}).problem(409, "stale_lease")
		x.do("POST", opPath(op, "heartbeat"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	})
}
