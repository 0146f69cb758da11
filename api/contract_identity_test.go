package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// identityContractCards are dupCards with a charge whose identity is its
// order and amount, and a CRM task synced back by the CRM's webhook: its
// identity is the task, and a registration from crm-webhook of a task
// completed within the window is an echo (10 minutes; one second for
// crm.task.brief).
func identityContractCards() domain.Cards {
	cs := dupCards()
	charge := cs["pay.charge"]
	charge.Name, charge.Identity = "pay.order", []string{"/order", "/amount"}
	task := cs["mail.send"]
	task.Name, task.Provider, task.Identity = "crm.task.sync", "acme-crm", []string{"/task"}
	task.Echo = &domain.Echo{Source: "crm-webhook", Within: 10 * time.Minute}
	brief := task
	brief.Name, brief.Echo = "crm.task.brief", &domain.Echo{Source: "crm-webhook", Within: time.Second}
	cs[charge.Name], cs[task.Name], cs[brief.Name] = charge, task, brief
	return cs
}

// TestContract_TwinByIdentity: while evt_1:charge is unknown_outcome, the
// same order and amount with a note under a new key is held for a person
// (awaiting_approval, twin_unresolved, naming the first), without a claim;
// another amount runs.
func TestContract_TwinByIdentity(t *testing.T) {
	x := newHarnessWith(t, identityContractCards())
	reg := func(key string, content map[string]any) map[string]any {
		return x.do("POST", "/v1/operations", x.tok, map[string]any{"key": key, "type": "pay.order", "content": content,
			"claim": map[string]any{"worker": "w-1"}}).ok(201)
	}
	first := reg("evt_1:charge", map[string]any{"order": "ord_7", "amount": 1200, "currency": "JPY"})
	tok := first["claim"].(map[string]any)["lease"].(map[string]any)["token"]
	x.do("POST", opPath(first, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	lost := x.do("POST", opPath(first, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "unknown_outcome",
		"error": map[string]any{"class": "timeout", "message": "read timeout"}}).ok(200)
	if lost["state"] != "unknown_outcome" {
		t.Fatalf("first: %v", lost)
	}
	twin := reg("evt_1:charge-retry", map[string]any{"order": "ord_7", "amount": 1200, "currency": "JPY", "note": "customer asked again"})
	msg, _ := twin["last_error"].(map[string]any)["message"].(string)
	if twin["state"] != "awaiting_approval" || lastErrorCode(twin) != "twin_unresolved" || twin["claim"] != nil ||
		!strings.Contains(msg, "evt_1:charge") || !strings.Contains(msg, first["id"].(string)) {
		t.Fatalf("the reworded twin: %v", twin)
	}
	x.do("POST", opPath(twin, "claim"), x.tok, map[string]any{"worker": "w-2"}).problem(409, "not_claimable")
	if other := reg("evt_2:charge", map[string]any{"order": "ord_7", "amount": 900, "note": "customer asked again"}); other["state"] != "processing" {
		t.Fatalf("another amount: %v", other)
	}
}

// TestContract_WebhookEcho: the CRM's webhook reports the task our
// workflow created, under a new event ID. Within the card's echo window
// it is held failed_terminal with loop_detected, the original named, and
// is not claimable; another task from the webhook runs, and so does the
// same task once the window has passed.
func TestContract_WebhookEcho(t *testing.T) {
	x := newHarnessWith(t, identityContractCards())
	complete := func(typ, task string) map[string]any {
		t.Helper()
		r := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "run_" + task + ":" + typ, "type": typ, "source": "workflow",
			"content": map[string]any{"task": task, "title": "Call Ann"}, "claim": map[string]any{"worker": "w-1", "begin": true}}).ok(201)
		tok := r["claim"].(map[string]any)["lease"].(map[string]any)["token"]
		return x.do("POST", opPath(r, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "completed",
			"result": map[string]any{"ref": "crm_" + task}}).ok(200)
	}
	webhook := func(event, typ, task string) map[string]any {
		t.Helper()
		ev := x.do("POST", "/v1/events", x.tok, map[string]any{"event_id": event, "source": "crm-webhook",
			"actions": []map[string]any{{"action": "sync", "type": typ,
				"content": map[string]any{"task": task, "title": "Call Ann", "changed_by": "crm"}}}}).ok(201)
		return ev["operations"].([]any)[0].(map[string]any)
	}
	card := x.do("GET", "/v1/operation-types/crm.task.sync", x.tok, nil).ok(200)
	if echo, _ := card["echo"].(map[string]any); fmt.Sprint(card["identity"]) != "[/task]" ||
		echo["source"] != "crm-webhook" || echo["within"] != "10m" {
		t.Fatalf("the card's identity and echo: %v %v", card["identity"], card["echo"])
	}
	orig := complete("crm.task.sync", "T-1")
	if orig["state"] != "completed" {
		t.Fatalf("original: %v", orig)
	}
	echo := webhook("crm_evt_1", "crm.task.sync", "T-1")
	msg, _ := echo["last_error"].(map[string]any)["message"].(string)
	if echo["state"] != "failed_terminal" || lastErrorCode(echo) != "loop_detected" ||
		!strings.Contains(msg, orig["id"].(string)) || !strings.Contains(msg, orig["key"].(string)) {
		t.Fatalf("the echo: %v", echo)
	}
	x.do("POST", opPath(echo, "claim"), x.tok, map[string]any{"worker": "w-2"}).problem(409, "not_claimable")
	if other := webhook("crm_evt_2", "crm.task.sync", "T-2"); other["state"] != "received" {
		t.Fatalf("another task from the webhook: %v", other)
	}

	complete("crm.task.brief", "T-3")
	time.Sleep(1100 * time.Millisecond)
	if late := webhook("crm_evt_3", "crm.task.brief", "T-3"); late["state"] != "received" {
		t.Fatalf("after the window: %v", late)
	}
}
