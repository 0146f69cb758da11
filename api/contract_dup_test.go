package api_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

// The duplicate paths: who retries (retry_layer), an unknown contract, and
// personal data in identifiers — each through the HTTP contract.

// dupCards are types that differ from a deduplicating mailer (key, a day's
// retention, three attempts) in one thing each.
func dupCards() domain.Cards {
	mail := domain.Card{Name: "mail.send", Provider: "mailer", ProviderIdempotency: domain.IdempotencyKey,
		ProviderKeyRetention: 24 * time.Hour, Lookup: domain.LookupManual,
		Retry:     domain.RetryPolicy{MaxAttempts: 3, MaxElapsed: time.Hour, Backoff: time.Second, BackoffMax: time.Minute},
		Retryable: []domain.ErrorClass{domain.ClassTransient, domain.ClassRateLimited},
		Terminal:  []domain.ErrorClass{domain.ClassValidation, domain.ClassAuth}, Lease: 30 * time.Second}
	cards := domain.Cards{mail.Name: mail}
	add := func(name string, change func(*domain.Card)) {
		c := mail
		c.Name = name
		change(&c)
		cards[name] = c
	}
	add("mail.worker", func(c *domain.Card) { c.RetryLayer = domain.RetryByWorker })
	add("mail.nobody", func(c *domain.Card) { c.RetryLayer = domain.RetryByNobody })
	add("mail.unknown", func(c *domain.Card) { c.ProviderIdempotency = domain.IdempotencyUnknown })
	add("mail.unverified", func(c *domain.Card) {
		c.Unverified = []string{"Does the mailer dedupe message keys across accounts?"}
	})
	add("mail.pattern", func(c *domain.Card) { c.KeyPattern = `^evt_[0-9]+:mail$` })
	add("pay.charge", func(c *domain.Card) {
		c.Provider, c.ProviderIdempotency, c.ProviderKeyRetention, c.Retry.MaxAttempts = "processor", domain.IdempotencyNone, 0, 1
	})
	add("digest.send", func(c *domain.Card) { c.TwinsAllowed = true; c.Retry.MaxAttempts = 1 })
	return cards
}

// settleAs registers key of typ with a claim, begins when asked, and
// settles with the error; it answers the settled operation.
func (x *harness) settleAs(key, typ string, begin bool, outcome, class string) map[string]any {
	x.t.Helper()
	res := x.register(key, typ, map[string]any{"worker": "w-1"})
	tok := res["claim"].(map[string]any)["lease"].(map[string]any)["token"]
	if begin {
		x.do("POST", opPath(res, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	}
	return x.do("POST", opPath(res, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": outcome,
		"error": map[string]any{"class": class, "code": "E1", "message": "the provider said no"}}).ok(200)
}

func lastErrorCode(op map[string]any) string {
	e, _ := op["last_error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// TestContract_RetryLayer: with retry_layer worker, the worker's SDK owns
// the retries: a failed_retryable settle is final (failed_terminal,
// worker_retries_exhausted, no next_retry_at) and no attempt 2 is handed
// out. With none, nobody retries — not even the re-send a deduplicating
// provider would make safe. With handoff, the retry is scheduled as before.
func TestContract_RetryLayer(t *testing.T) {
	x := newHarnessWith(t, dupCards())
	for _, tc := range []struct {
		typ, code string
		begin     bool
		class     string
		state     string
	}{
		{"mail.send", "E1", true, "rate_limited", "failed_retryable"},
		{"mail.worker", "worker_retries_exhausted", true, "rate_limited", "failed_terminal"},
		{"mail.worker", "worker_retries_exhausted", false, "transient", "failed_terminal"},
		{"mail.nobody", "no_automatic_retry", false, "transient", "failed_terminal"},
	} {
		key := tc.typ + "-" + tc.class
		if tc.begin {
			key += "-began"
		}
		op := x.settleAs(key, tc.typ, tc.begin, "failed_retryable", tc.class)
		if op["state"] != tc.state || lastErrorCode(op) != tc.code {
			t.Fatalf("%s: %s %q, want %s %q: %v", key, op["state"], lastErrorCode(op), tc.state, tc.code, op)
		}
		if tc.state == "failed_terminal" {
			if op["next_retry_at"] != nil {
				t.Fatalf("%s: a retry is scheduled on top of the retry layer: %v", key, op)
			}
			if p := x.do("POST", opPath(op, "claim"), x.tok, map[string]any{"worker": "w-2"}).problem(409, "not_claimable"); p["reason"] != "handed_off" {
				t.Fatalf("%s: attempt 2 handed out: %v", key, p)
			}
		}
	}
	// A doubt after begin on a provider that deduplicates: Handoff re-sends
	// under the same key, unless nobody may retry.
	if op := x.settleAs("dedup", "mail.send", true, "unknown_outcome", "timeout"); op["state"] != "failed_retryable" {
		t.Fatalf("handoff layer, key retained: %v", op)
	}
	if op := x.settleAs("dedup-none", "mail.nobody", true, "unknown_outcome", "timeout"); op["state"] != "unknown_outcome" || op["next_retry_at"] != nil {
		t.Fatalf("retry_layer none re-sent on its own: %v", op)
	}
	card := x.do("GET", "/v1/operation-types/mail.nobody", x.tok, nil).ok(200)
	if card["retry_layer"] != "none" || card["automatic_resend"] != false {
		t.Fatalf("card: %v", card)
	}
}

// TestContract_UnknownContract: provider_idempotency unknown, or an
// unverified statement about de-duplication, turns off every automatic
// re-send after begin: a lost answer goes to a person, and the card says
// why.
func TestContract_UnknownContract(t *testing.T) {
	x := newHarnessWith(t, dupCards())
	for _, typ := range []string{"mail.unknown", "mail.unverified"} {
		if op := x.settleAs("lost-"+typ, typ, true, "unknown_outcome", "timeout"); op["state"] != "unknown_outcome" || op["next_retry_at"] != nil {
			t.Fatalf("%s: re-sent automatically on an unknown contract: %v", typ, op)
		}
		card := x.do("GET", "/v1/operation-types/"+typ, x.tok, nil).ok(200)
		why, _ := card["automatic_resend_off"].(string)
		if card["automatic_resend"] != false || why == "" {
			t.Fatalf("%s: card does not say re-sends are off: %v", typ, card)
		}
	}
	if card := x.do("GET", "/v1/operation-types/mail.unknown", x.tok, nil).ok(200); card["provider_idempotency"] != "unknown" {
		t.Fatalf("provider_idempotency: %v", card)
	}
	// A person who knows better may still confirm and retry: only the
	// automatic re-send is off.
	op := x.settleAs("lost-again", "mail.unknown", true, "unknown_outcome", "timeout")
	x.do("POST", opPath(op, "resolve"), "alice", map[string]any{"action": "confirm_not_executed", "then": "retry",
		"reason": "not in the mailer's log", "expected_version": op["version"]}).ok(200)
}

// TestContract_PersonalDataInKeys: keys, event IDs and correlation IDs with
// an email address or a phone number are refused with the field and the
// rule, and nothing is written; a card's key_pattern is enforced.
func TestContract_PersonalDataInKeys(t *testing.T) {
	x := newHarnessWith(t, dupCards())
	refused := func(body map[string]any, path, field, rule string) {
		t.Helper()
		r := x.do("POST", path, x.tok, body)
		p := r.problem(400, "validation_failed")
		if got := r.fields(); len(got) != 1 || got[0] != field || !strings.Contains(p["errors"].([]any)[0].(map[string]any)["message"].(string), rule) {
			t.Fatalf("%v: fields %v, want %s (%s): %v", body, got, field, rule, p)
		}
	}
	op := func(key string, extra ...string) map[string]any {
		b := map[string]any{"key": key, "type": "mail.send", "content": map[string]any{"to": "u_1"}}
		for i := 0; i+1 < len(extra); i += 2 {
			b[extra[i]] = extra[i+1]
		}
		return b
	}
	refused(op("alice@example.com:crm_task"), "/v1/operations", "key", "an email address")
	refused(op("sms:+819012345678"), "/v1/operations", "key", "a phone number")
	refused(op("sms:090-1234-5678"), "/v1/operations", "key", "a phone number")
	refused(op("evt_1:mail", "event_id", "bob@example.org"), "/v1/operations", "event_id", "an email address")
	refused(op("evt_1:mail", "correlation_id", "run for +44 20 7946 0958"), "/v1/operations", "correlation_id", "a phone number")
	refused(map[string]any{"event_id": "evt_carol@example.com", "actions": []map[string]any{{"action": "mail", "type": "mail.send",
		"content": map[string]any{"to": "u_1"}}}}, "/v1/events", "event_id", "an email address")
	refused(map[string]any{"event_id": "evt_2", "actions": []map[string]any{{"action": "sms+819012345678", "type": "mail.send",
		"content": map[string]any{"to": "u_1"}}}}, "/v1/events", "actions[0].action", "a phone number")
	if list := x.do("GET", "/v1/operations", x.tok, nil).ok(200); len(list["items"].([]any)) != 0 {
		t.Fatalf("a refused registration was written: %v", list)
	}
	// A key made from a hash of the personal part passes.
	x.do("POST", "/v1/operations", x.tok, op("evt_1:mail:u_"+domain.SHA256Hex([]byte("alice@example.com"))[:16])).ok(201)

	refused(map[string]any{"key": "k1", "type": "mail.pattern", "content": map[string]any{}}, "/v1/operations", "key", "key_pattern")
	x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "evt_42:mail", "type": "mail.pattern", "content": map[string]any{}}).ok(201)
}

// TestContract_Twins: while evt_1:charge is unknown_outcome, the same
// charge under evt_1:charge-retry is not an escape hatch: it waits for a
// person (awaiting_approval, twin_unresolved, naming the twin) and is not
// claimable; approving it records a deliberate second execution. A card
// may allow twins. A registration that supersedes an operation that was
// sent waits for an approval too.
func TestContract_Twins(t *testing.T) {
	x := newHarnessWith(t, dupCards())
	charge := map[string]any{"amount": 1200, "currency": "JPY", "customer": "cus_9"}
	reg := func(key, typ string, content map[string]any, extra ...any) *reply {
		b := map[string]any{"key": key, "type": typ, "content": content, "claim": map[string]any{"worker": "w-1"}}
		for i := 0; i+1 < len(extra); i += 2 {
			b[extra[i].(string)] = extra[i+1]
		}
		return x.do("POST", "/v1/operations", x.tok, b)
	}
	lose := func(r map[string]any) map[string]any {
		tok := r["claim"].(map[string]any)["lease"].(map[string]any)["token"]
		x.do("POST", opPath(r, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
		return x.do("POST", opPath(r, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "unknown_outcome",
			"error": map[string]any{"class": "timeout", "message": "read timeout"}}).ok(200)
	}
	first := lose(reg("evt_1:charge", "pay.charge", charge).ok(201))
	if first["state"] != "unknown_outcome" {
		t.Fatalf("first: %v", first)
	}
	twin := reg("evt_1:charge-retry", "pay.charge", charge).ok(201)
	msg, _ := twin["last_error"].(map[string]any)["message"].(string)
	if twin["state"] != "awaiting_approval" || lastErrorCode(twin) != "twin_unresolved" || twin["claim"] != nil ||
		!strings.Contains(msg, "evt_1:charge") || !strings.Contains(msg, first["id"].(string)) {
		t.Fatalf("twin: %v", twin)
	}
	if refused, _ := twin["claim_refused"].(map[string]any); refused["reason"] != "awaiting_approval" {
		t.Fatalf("twin claim: %v", twin)
	}
	x.do("POST", opPath(twin, "claim"), x.tok, map[string]any{"worker": "w-2"}).problem(409, "not_claimable")
	// Other content under another key is no twin.
	if other := reg("evt_2:charge", "pay.charge", map[string]any{"amount": 800}).ok(201); other["state"] != "processing" {
		t.Fatalf("other content: %v", other)
	}
	approved := x.do("POST", opPath(twin, "approve"), "bob", map[string]any{"content_version": 1,
		"reason": "the first charge never reached the processor; charge once more", "expected_version": twin["version"]}).ok(200)
	if approved["state"] != "received" {
		t.Fatalf("approved twin: %v", approved)
	}
	tl := x.do("GET", opPath(twin, "timeline"), "bob", nil).ok(200)
	items := tl["items"].([]any)
	last := items[len(items)-1].(map[string]any)
	if d, _ := last["detail"].(map[string]any); last["action"] != "approved" || d["deliberate_second_execution"] == nil {
		t.Fatalf("the approval does not record a deliberate second execution: %v", last)
	}

	// twins: allow — identical content is normal for this type.
	lose(reg("digest:2026-12-01", "digest.send", map[string]any{"list": "ops"}).ok(201))
	if d := reg("digest:2026-12-02", "digest.send", map[string]any{"list": "ops"}).ok(201); d["state"] != "processing" {
		t.Fatalf("twins allowed: %v", d)
	}

	// supersedes: an original that was sent needs an approval; one that
	// never was does not.
	sent := lose(reg("evt_3:charge", "pay.charge", map[string]any{"amount": 5}).ok(201))
	cancelled := x.do("POST", opPath(sent, "resolve"), "alice", map[string]any{"action": "confirm_not_executed", "then": "cancel",
		"reason": "not at the processor", "expected_version": sent["version"]}).ok(200)
	if cancelled["state"] != "cancelled" {
		t.Fatalf("cancel: %v", cancelled)
	}
	repl := reg("evt_3:charge-v2", "pay.charge", map[string]any{"amount": 6}, "supersedes", sent["id"]).ok(201)
	if repl["state"] != "awaiting_approval" || lastErrorCode(repl) != "supersedes_sent" {
		t.Fatalf("supersedes a sent original: %v", repl)
	}
	unsent := reg("evt_4:charge", "pay.charge", map[string]any{"amount": 7}).ok(201)
	tok := unsent["claim"].(map[string]any)["lease"].(map[string]any)["token"]
	failed := x.do("POST", opPath(unsent, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_terminal",
		"error": map[string]any{"class": "validation", "message": "bad amount"}}).ok(200)
	x.do("POST", opPath(failed, "resolve"), "alice", map[string]any{"action": "cancel", "reason": "wrong amount",
		"expected_version": failed["version"]}).ok(200)
	if r := reg("evt_4:charge-v2", "pay.charge", map[string]any{"amount": 8}, "supersedes", unsent["id"]).ok(201); r["state"] != "processing" {
		t.Fatalf("supersedes an original never sent: %v", r)
	}
}

// TestContract_ProviderKeyPerContentVersion: a revision after the provider
// key was sent is not sent under the old key. Once the earlier send is
// known not to have executed (a validation refusal) the approved revision
// goes out under a new provider key, the claim says why, and the timeline
// records the change as its own event. While the earlier send may have
// executed, the approved revision waits for a person; their "not executed"
// lets it go out under its new key.
func TestContract_ProviderKeyPerContentVersion(t *testing.T) {
	x := newHarnessWith(t, dupCards())
	sent := func(key string, content map[string]any) (map[string]any, any) {
		r := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": key, "type": "mail.send", "content": content,
			"claim": map[string]any{"worker": "w-1"}}).ok(201)
		tok := r["claim"].(map[string]any)["lease"].(map[string]any)["token"]
		b := x.do("POST", opPath(r, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
		if b["provider_key_content_version"] != 1.0 {
			t.Fatalf("begin does not record the content version the key was sent with: %v", b)
		}
		return r, tok
	}
	revise := func(op map[string]any, content map[string]any) map[string]any {
		r := x.do("POST", opPath(op, "revisions"), "alice", map[string]any{"content": content, "reason": "fix the text",
			"expected_version": op["version"]}).ok(200)
		return x.do("POST", opPath(r, "approve"), "bob", map[string]any{"content_version": 2, "reason": "looks right",
			"expected_version": r["version"]}).ok(200)
	}
	timelineActions := func(op map[string]any) []string {
		var out []string
		for _, e := range x.do("GET", opPath(op, "timeline"), "bob", nil).ok(200)["items"].([]any) {
			out = append(out, e.(map[string]any)["action"].(string))
		}
		return out
	}

	// The provider refused v1 (validation): it did nothing.
	op, tok := sent("evt_5:mail", map[string]any{"text": "v1"})
	oldKey := op["provider_key"]
	failed := x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_terminal",
		"error": map[string]any{"class": "validation", "message": "text too long"}}).ok(200)
	approved := revise(failed, map[string]any{"text": "v2"})
	if approved["state"] != "received" || approved["provider_key"] == oldKey || approved["provider_key_first_sent_at"] != nil {
		t.Fatalf("the approved revision keeps the spent key %v: %v", oldKey, approved)
	}
	if acts := timelineActions(op); acts[len(acts)-1] != "provider_key_changed" {
		t.Fatalf("no key change in the timeline: %v", acts)
	}
	claim := x.do("POST", opPath(op, "claim"), x.tok, map[string]any{"worker": "w-2"}).ok(200)
	if use, _ := claim["provider_key_use"].(string); claim["provider_key"] != approved["provider_key"] || !strings.Contains(use, "new provider key") {
		t.Fatalf("the claim does not say which key and why: %v", claim)
	}
	// Each attempt shows the provider key it was given to send.
	atts := x.do("GET", opPath(op, "attempts"), "bob", nil).ok(200)["items"].([]any)
	if len(atts) != 2 || atts[0].(map[string]any)["provider_key"] != oldKey || atts[1].(map[string]any)["provider_key"] != approved["provider_key"] {
		t.Fatalf("the attempts do not show their provider keys (%v, then %v): %v", oldKey, approved["provider_key"], atts)
	}

	// v1 timed out after begin: it may have executed. The provider
	// deduplicates, so Handoff holds a re-send under the same key; a
	// revision approved meanwhile must not go out under that key (the
	// provider would answer v1's result) nor under a new one (v1 may have
	// run): it waits for a person.
	op, tok = sent("evt_6:mail", map[string]any{"text": "v1 of another mail"}) // evt_5 with v1 is still open: a twin
	oldKey = op["provider_key"]
	doubt := x.do("POST", opPath(op, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "unknown_outcome",
		"error": map[string]any{"class": "timeout", "message": "read timeout"}}).ok(200)
	if doubt["state"] != "failed_retryable" {
		t.Fatalf("doubt: %v", doubt)
	}
	waiting := revise(doubt, map[string]any{"text": "v2"})
	if waiting["state"] != "unknown_outcome" || lastErrorCode(waiting) != "revision_waits_for_outcome" || waiting["provider_key"] != oldKey {
		t.Fatalf("the revision does not wait for the earlier send's outcome: %v", waiting)
	}
	x.do("POST", opPath(op, "claim"), x.tok, map[string]any{"worker": "w-2"}).problem(409, "not_claimable")
	// Nor may a person re-send it under the old key: the provider
	// deduplicates and still remembers it, but for v1, so v2 would get v1's
	// stored result (found by store/TestLedgerMachine).
	x.do("POST", opPath(op, "resolve"), "alice", map[string]any{"action": "resend_same_key", "reason": "the mailer deduplicates",
		"expected_version": waiting["version"]}).problem(409, "invalid_transition")
	retried := x.do("POST", opPath(op, "resolve"), "alice", map[string]any{"action": "confirm_not_executed", "then": "retry",
		"reason": "v1 is not in the mailer's log", "expected_version": waiting["version"]}).ok(200)
	if retried["state"] != "received" || retried["provider_key"] == oldKey {
		t.Fatalf("after not executed the revision goes out under a new key: %v", retried)
	}
	if acts := timelineActions(op); acts[len(acts)-1] != "provider_key_changed" {
		t.Fatalf("no key change in the timeline: %v", acts)
	}

	// A provider that does not deduplicate: the key means nothing there,
	// it stays (the desk shows the re-send risk instead).
	r := x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "evt_7:charge", "type": "pay.charge",
		"content": map[string]any{"amount": 1}, "claim": map[string]any{"worker": "w-1"}}).ok(201)
	tok = r["claim"].(map[string]any)["lease"].(map[string]any)["token"]
	x.do("POST", opPath(r, "begin"), x.tok, map[string]any{"lease_token": tok}).ok(200)
	f := x.do("POST", opPath(r, "settle"), x.tok, map[string]any{"lease_token": tok, "outcome": "failed_terminal",
		"error": map[string]any{"class": "validation", "message": "bad amount"}}).ok(200)
	rev := x.do("POST", opPath(f, "revisions"), "alice", map[string]any{"content": map[string]any{"amount": 2}, "reason": "fix",
		"expected_version": f["version"]}).ok(200)
	if a := x.do("POST", opPath(rev, "approve"), "bob", map[string]any{"content_version": 2, "reason": "ok",
		"expected_version": rev["version"]}).ok(200); a["provider_key"] != r["provider_key"] {
		t.Fatalf("none: the key changed: %v", a)
	}
}
