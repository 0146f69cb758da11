package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/drill"
)

// TestDrill_ExecuteAdapter: a card with an execute_adapter is drilled
// through Handoff's own execution — POST /v1/execute/{type}, no worker
// code — against the sandbox's faults, and passes; the receipts verify.
func TestDrill_ExecuteAdapter(t *testing.T) {
	rig := newDrillRig(t, cardsFrom(t, `
- name: exec.dedup
  provider: sandboxed
  provider_idempotency: key
  provider_key_retention: 24h
  retry: {max_attempts: 5, backoff: 1s}
  retryable: [transient, rate_limited]
  terminal: [validation, auth, permission]
  drill: {adapter: sandbox}
  execute_adapter:
    request: {url: "https://api.example.com/v1/charges", auth_env: PROVIDER_TOKEN}
    completed: {status: [200, 201], ref: /id}
- name: exec.lookup
  provider: sandboxed
  provider_idempotency: none
  lookup: api
  lookup_authoritative: true
  lookup_adapter:
    request: {url: "https://mail.example.com/v1/messages/{provider_key}"}
    found: {status: [200], ref: /id, key: /external_id}
    not_found: {status: [404]}
  retry: {max_attempts: 5, backoff: 1s}
  retryable: [transient, rate_limited]
  terminal: [validation, auth, permission]
  drill: {adapter: sandbox, lookup: authoritative}
  execute_adapter:
    request: {url: "https://mail.example.com/v1/messages", body: form}
    completed: {status: [201], ref: /id}
`))
	recs, err := rig.drill()
	if err != nil {
		for _, rec := range recs {
			t.Logf("%s", rec.Markdown(""))
		}
		t.Fatal(err)
	}
	for _, name := range []string{"exec.dedup", "exec.lookup"} {
		rec := recs[name]
		if rec.Verdict != drill.VerdictPass || len(rec.Cases) != 5 {
			t.Fatalf("%s: %s with %d cases:\n%s", name, rec.Verdict, len(rec.Cases), rec.Markdown(""))
		}
		if !strings.Contains(strings.Join(rec.Conditions.Notes, "\n"), "POST /v1/execute/"+name) {
			t.Fatalf("%s: the receipt does not say Handoff made the calls: %v", name, rec.Conditions.Notes)
		}
		for _, c := range rec.Cases {
			if c.Executions > 1 {
				t.Fatalf("%s case %d executed %d times", name, c.Number, c.Executions)
			}
		}
		if c := caseOf(t, rec, 2); c.State != "completed" {
			t.Fatalf("%s: the lost answer ended %s, want completed (by the lookup or a safe re-send): %+v", name, c.State, c)
		}
		if _, err := verifyReceipt(context.Background(), rig.store, filepath.Join(rig.dir, rec.ID+".json")); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
