package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestContract_ClaimBegin: "begin": true on register's claim, on a claim and
// on a pull answers with the operation already action_pending — the worker
// calls the provider next and settles, two calls in all — and the store
// holds one audit event for the claim and the begin (for register's claim,
// one for the registration, the claim and the begin), with the attempt's
// began_at set, exactly as it answered.
func TestContract_ClaimBegin(t *testing.T) {
	x := newHarness(t)
	begun := map[string]any{"worker": "w-1", "begin": true}
	check := func(name string, op map[string]any, from, action string) {
		t.Helper()
		if op["state"] != "action_pending" || op["provider_key_first_sent_at"] == nil {
			t.Fatalf("%s: answered %v, want action_pending with the provider key sent", name, op)
		}
		id := op["id"].(string)
		events, err := x.store.Timeline(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		last := events[len(events)-1]
		if last.Action != action || last.FromState != from || last.ToState != "action_pending" ||
			int64(len(events)) != int64(op["version"].(float64)) {
			t.Fatalf("%s: timeline ends %s %s → %s after %d events at version %v", name, last.Action, last.FromState,
				last.ToState, len(events), op["version"])
		}
		atts, err := x.store.Attempts(context.Background(), id)
		if err != nil || len(atts) != 1 || atts[0].BeganAt == nil || !atts[0].BeganAt.Equal(atts[0].ClaimedAt) {
			t.Fatalf("%s: attempts %+v (%v), want one, begun as claimed", name, atts, err)
		}
	}

	res := x.register("r", "crm.task.create", begun)
	check("register", res, "", "registered_and_began")
	tok := res["claim"].(map[string]any)["lease"].(map[string]any)["token"]
	// The next call is the settle: no begin between.
	done := x.do("POST", opPath(res, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "completed",
		"result": map[string]any{"ref": "crm_1"}}).ok(200)
	if done["state"] != "completed" {
		t.Fatalf("settle after a begun claim: %v", done)
	}
	// A repeated begin by the holder is the no-op it always was.
	again := x.register("r2", "crm.task.create", begun)
	tok2 := again["claim"].(map[string]any)["lease"].(map[string]any)["token"]
	if b := x.do("POST", opPath(again, "begin"), x.tok, map[string]any{"lease_token": tok2}).ok(200); b["version"] != again["version"] {
		t.Fatalf("begin after a begun claim changed the operation: %v", b)
	}

	op := x.register("c", "crm.task.create", nil)
	c := x.do("POST", opPath(op, "claim"), x.tok, begun).ok(200)
	check("claim", c["operation"].(map[string]any), "received", "claimed_and_began")

	x.register("p", "crm.task.create", nil)
	list := x.do("POST", "/v1/claims", x.tok, map[string]any{"worker": "w-2", "begin": true}).ok(200)
	claims := list["claims"].([]any)
	if len(claims) != 1 {
		t.Fatalf("pull %v", list)
	}
	check("pull", claims[0].(map[string]any)["operation"].(map[string]any), "received", "claimed_and_began")

	// Without begin nothing changes: processing, and begin is the worker's.
	plain := x.register("n", "crm.task.create", map[string]any{"worker": "w-1", "begin": false})
	if plain["state"] != "processing" || plain["provider_key_first_sent_at"] != nil {
		t.Fatalf("a claim without begin: %v", plain)
	}
	x.do("POST", opPath(op, "claim"), x.tok, map[string]any{"worker": "w-1", "begin": "yes"}).problem(400, "validation_failed")
}

// TestOpenAPI_ClaimBegin: the document describes begin wherever a claim is
// asked for, so generated clients can send it.
func TestOpenAPI_ClaimBegin(t *testing.T) {
	x := newHarness(t)
	doc := x.do("GET", "/v1/openapi.json", "", nil).ok(200)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	for _, name := range []string{"ClaimRequest", "PullRequest"} {
		props, _ := schemas[name].(map[string]any)["properties"].(map[string]any)
		b, _ := props["begin"].(map[string]any)
		desc, _ := b["description"].(string)
		if !strings.Contains(fmt.Sprint(b["type"]), "boolean") || !strings.Contains(desc, "action_pending") {
			t.Fatalf("%s.begin: %v", name, b)
		}
	}
}
