package api_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

func TestContract_Authentication(t *testing.T) {
	x := newHarness(t)
	for name, header := range map[string]string{"none": "", "basic": "Basic dXNlcjpwYXNz", "empty bearer": "Bearer ",
		"unknown token": "Bearer hnd_unknown", "unknown person": "Bearer eyJ.x.y"} {
		t.Run(name, func(t *testing.T) {
			r := x.do("GET", "/v1/operations", "", nil, "Authorization", header)
			r.problem(401, "unauthenticated")
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("WWW-Authenticate %q", r.header.Get("WWW-Authenticate"))
			}
		})
	}
	t.Run("revoked", func(t *testing.T) {
		secret, tok, err := x.tokens.Create(context.Background(), "campaigns", "short-lived")
		if err != nil {
			t.Fatal(err)
		}
		x.do("GET", "/v1/operations", secret, nil).ok(200)
		if err := x.tokens.Revoke(context.Background(), tok.ID); err != nil {
			t.Fatal(err)
		}
		x.do("GET", "/v1/operations", secret, nil).problem(401, "unauthenticated")
	})
	t.Run("cookies are not credentials", func(t *testing.T) {
		x.do("GET", "/v1/operations", "", nil, "Cookie", "session="+x.tok).problem(401, "unauthenticated")
	})
}

func TestContract_Reads(t *testing.T) {
	x := newHarness(t)
	var ids []string
	for i := range 3 {
		ids = append(ids, x.register(fmt.Sprintf("k%d", i), "crm.task.create", nil)["id"].(string))
	}
	x.unknownOutcome("u")
	x.do("POST", "/v1/operations", x.other, map[string]any{"key": "k0", "type": "crm.task.create", "content": map[string]any{}}).ok(201)

	page := x.do("GET", "/v1/operations?limit=2", x.tok, nil).ok(200)
	items := page["items"].([]any)
	if len(items) != 2 || items[0].(map[string]any)["id"] != ids[0] || page["next_cursor"] == nil {
		t.Fatalf("first page %v", page)
	}
	if _, has := items[0].(map[string]any)["content"]; has {
		t.Fatal("lists carry content")
	}
	rest := x.do("GET", "/v1/operations?limit=2&cursor="+page["next_cursor"].(string), x.tok, nil).ok(200)
	if len(rest["items"].([]any)) != 2 || rest["next_cursor"] != nil {
		t.Fatalf("second page %v", rest)
	}
	byKey := x.do("GET", "/v1/operations?key=k1", x.tok, nil).ok(200)["items"].([]any)
	if len(byKey) != 1 || byKey[0].(map[string]any)["id"] != ids[1] {
		t.Fatalf("by key %v", byKey)
	}
	desk := x.do("GET", "/v1/operations?state=unknown_outcome&state=failed_terminal", x.tok, nil).ok(200)["items"].([]any)
	if len(desk) != 1 {
		t.Fatalf("desk %v", desk)
	}
	if other := x.do("GET", "/v1/operations?namespace=other", x.tok, nil).ok(200)["items"].([]any); len(other) != 0 {
		t.Fatalf("another namespace leaked: %v", other)
	}
	for _, q := range []string{"state=nope", "limit=0", "limit=201", "older_than=soon", "colour=red", "type=a&type=b"} {
		x.do("GET", "/v1/operations?"+q, x.tok, nil).problem(400, "validation_failed")
	}

	got := x.do("GET", "/v1/operations/"+ids[0], x.tok, nil).ok(200)
	if got["content"].(map[string]any)["n"] != "k0" {
		t.Fatalf("GET one lacks content: %v", got)
	}
	x.do("GET", "/v1/operations/"+ids[0], x.other, nil).problem(404, "not_found")
	x.do("GET", "/v1/operations/op_missing", x.tok, nil).problem(404, "not_found")
	x.do("GET", "/v1/operations/"+ids[0]+"/attempts", x.other, nil).problem(404, "not_found")

	op, tok := x.claimed("history")
	x.do("POST", opPath(op, "begin"), x.tok, map[string]any{"lease_token": tok}, "X-Request-ID", "trace-123").ok(200)
	atts := x.do("GET", opPath(op, "attempts"), x.tok, nil).ok(200)["items"].([]any)
	if len(atts) != 1 || atts[0].(map[string]any)["began_at"] == nil || atts[0].(map[string]any)["outcome"] != nil {
		t.Fatalf("attempts %v", atts)
	}
	evs := x.do("GET", opPath(op, "timeline"), x.tok, nil).ok(200)["items"].([]any)
	last := evs[len(evs)-1].(map[string]any)
	if len(evs) != 2 || evs[0].(map[string]any)["action"] != "registered_and_claimed" || last["action"] != "began" || last["request_id"] != "trace-123" || last["hash"] == "" {
		t.Fatalf("timeline %v", evs)
	}
	if _, has := last["client_addr"]; has {
		t.Fatal("the timeline shows client addresses")
	}
}

func TestContract_Events(t *testing.T) {
	x := newHarness(t)
	ev := map[string]any{"event_id": "evt_42", "source": "shop-webhook", "correlation_id": "run-7", "actions": []any{
		map[string]any{"action": "crm_task", "type": "crm.task.create", "content": map[string]any{"a": 1}},
		map[string]any{"action": "coupon", "type": "coupon.issue", "content": map[string]any{"b": 2}},
	}}
	r := x.do("POST", "/v1/events", x.tok, ev)
	first := r.ok(201)
	ops := first["operations"].([]any)
	if len(ops) != 2 || ops[0].(map[string]any)["key"] != "evt_42:crm_task" || ops[1].(map[string]any)["state"] != "awaiting_approval" {
		t.Fatalf("event %v", first)
	}
	r = x.do("POST", "/v1/events", x.tok, ev)
	if again := r.ok(200); r.header.Get("Idempotent-Replayed") != "true" || len(again["operations"].([]any)) != 2 {
		t.Fatalf("redelivery %v %v", again, r.header)
	}
	ev["actions"] = []any{map[string]any{"action": "crm_task", "type": "crm.task.create", "content": map[string]any{"a": 2}}}
	x.do("POST", "/v1/events", x.tok, ev).problem(422, "fingerprint_mismatch")
	got := x.do("GET", "/v1/events/evt_42", x.tok, nil).ok(200)
	if got["event_id"] != "evt_42" || got["source"] != "shop-webhook" || len(got["operations"].([]any)) != 2 {
		t.Fatalf("GET event %v", got)
	}
	x.do("GET", "/v1/events/evt_42", x.other, nil).problem(404, "not_found")
	x.do("POST", "/v1/events", x.tok, map[string]any{"event_id": "e2", "actions": []any{}}).problem(400, "validation_failed")
	x.do("POST", "/v1/events", x.tok, map[string]any{"event_id": "e3", "actions": []any{
		map[string]any{"action": "a", "type": "nope", "content": map[string]any{}}}}).problem(422, "unknown_type")
}

func TestContract_OperationTypes(t *testing.T) {
	x := newHarness(t)
	list := x.do("GET", "/v1/operation-types", x.tok, nil).ok(200)["items"].([]any)
	if len(list) != len(contractCards()) || list[0].(map[string]any)["name"] != "coupon.issue" {
		t.Fatalf("types %v", list)
	}
	card := x.do("GET", "/v1/operation-types/crm.task.create", x.tok, nil).ok(200)
	retry := card["retry"].(map[string]any)
	if card["provider"] != "acme-crm" || retry["max_elapsed"] != "1h" || card["lease"] != "30s" || card["terminal"].([]any)[0] != "validation" {
		t.Fatalf("card %v", card)
	}
	if strings.Contains(fmt.Sprint(card), "secret-path") {
		t.Fatal("the card shows its notify URL")
	}
	x.do("GET", "/v1/operation-types/nope", x.tok, nil).problem(404, "not_found")
}

// TestContract_OperationTypesShowEveryLine: the lines a card may carry
// beyond the first ones — key_pattern, twins, provider_concurrency,
// content_visible_to, the destinations (host only), escalation and the
// lookup adapter's binding — are in the answer.
func TestContract_OperationTypesShowEveryLine(t *testing.T) {
	cs := contractCards()
	crm := cs["crm.task.create"]
	crm.KeyPattern, crm.TwinsAllowed, crm.ProviderConcurrency = "^evt_[a-z0-9]+:crm$", true, domain.ConcurrencySerialises
	crm.ContentVisibleTo, crm.EscalateAfter, crm.NotifyIncludeData = domain.RoleOperator, 30*time.Minute, true
	crm.Escalate = []domain.Destination{{URL: "https://pager.example.com/hook/secret-too", SecretEnv: "PAGER_SECRET", Format: domain.FormatStandard}}
	crm.Lookup = domain.LookupAPI
	crm.LookupAdapter = &domain.LookupAdapter{Method: "GET", URL: "https://crm.example.com/tasks?external_id={provider_key}",
		Found: domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", Key: "/data/0/external_id"}}
	cs[crm.Name] = crm
	x := newHarnessWith(t, cs)
	card := x.do("GET", "/v1/operation-types/crm.task.create", x.tok, nil).ok(200)
	want := map[string]any{"key_pattern": "^evt_[a-z0-9]+:crm$", "twins": "allow", "provider_concurrency": "serialises",
		"content_visible_to": "operator", "escalate_after": "30m", "notify_include_data": true}
	for k, v := range want {
		if card[k] != v {
			t.Errorf("%s = %v, want %v", k, card[k], v)
		}
	}
	notify, _ := card["notify"].([]any)
	escalate, _ := card["escalate"].([]any)
	if len(notify) != 1 || notify[0].(map[string]any)["host"] != "hooks.example.com" || len(escalate) != 1 ||
		escalate[0].(map[string]any)["host"] != "pager.example.com" || escalate[0].(map[string]any)["secret_env"] != "PAGER_SECRET" {
		t.Errorf("destinations: notify %v escalate %v", notify, escalate)
	}
	if strings.Contains(fmt.Sprint(card), "secret-") {
		t.Errorf("a destination's path is shown: %v", card)
	}
	if a, _ := card["lookup_adapter"].(map[string]any); a["key"] != "/data/0/external_id" {
		t.Errorf("lookup_adapter %v", a)
	}
	plain := x.do("GET", "/v1/operation-types/mail.send", x.tok, nil).ok(200)
	if plain["key_pattern"] != nil || plain["twins"] != "hold" || plain["provider_concurrency"] != "unknown" ||
		plain["content_visible_to"] != nil || plain["escalate_after"] != nil {
		t.Errorf("a card without the lines: %v", plain)
	}
}

func TestContract_Service(t *testing.T) {
	x := newHarness(t)
	x.do("GET", "/healthz", "", nil).ok(200)
	x.do("GET", "/readyz", "", nil).ok(200)
	x.readyFn = func(context.Context) error { return errors.New("dial tcp 10.0.0.1:5432: connection refused") }
	r := x.do("GET", "/readyz", "", nil)
	if r.problem(503, "unavailable"); r.header.Get("Retry-After") == "" || strings.Contains(string(r.raw), "10.0.0.1") {
		t.Fatalf("readyz down: %v %s", r.header, r.raw)
	}
	x.readyFn = func(context.Context) error { return domain.Errorf(domain.EUnavailable, "pending migrations") }
	x.do("GET", "/readyz", "", nil).problem(503, "unavailable")

	x.do("GET", "/v1/operations/op_abc", x.tok, nil)
	x.do("GET", "/no/such/path", "", nil).problem(404, "not_found")
	m := x.do("GET", "/metrics", "", nil)
	body := string(m.raw)
	for _, want := range []string{
		`http_requests_total{method="GET",route="/v1/operations/:id",status="404"} 1`,
		`http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`http_request_duration_seconds_bucket{method="GET",route="/readyz"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, "op_abc") {
		t.Error("metrics carry a raw path")
	}
}
