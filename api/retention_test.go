package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// TestContract_ContentPurged: after content retention, GET one has no
// content and says when it went, the result keeps its ref but not its
// data, and a replay of the registration is still a replay with the ref.
func TestContract_ContentPurged(t *testing.T) {
	x := newHarness(t)
	op, tok := x.claimed("k-purged")
	x.do("POST", opPath(op, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "completed",
		"result": map[string]any{"ref": "task_9", "data": map[string]any{"owner": "ada@example.com"}}}).ok(200)

	later := domain.NewLedger(x.store, contractCards())
	later.Now = func() time.Time { return time.Now().Add(48 * time.Hour) }
	if n, err := later.Upkeep.PurgeContent(context.Background(), 24*time.Hour, 10); err != nil || n != 1 {
		t.Fatalf("purged %d: %v", n, err)
	}

	got := x.do("GET", opPath(op, ""), x.tok, nil).ok(200)
	res, _ := got["result"].(map[string]any)
	if _, has := got["content"]; has || got["content_purged_at"] == nil || got["content_sha256"] != op["content_sha256"] ||
		res["ref"] != "task_9" || res["data"] != nil {
		t.Fatalf("purged operation: %v", got)
	}
	r := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "k-purged", "type": "crm.task.create",
		"content": map[string]any{"n": "k-purged"}})
	again := r.ok(200)
	if again["id"] != op["id"] || r.header.Get("Idempotent-Replayed") != "true" || again["result"].(map[string]any)["ref"] != "task_9" {
		t.Fatalf("replay after the purge: %s", r.raw)
	}
}
