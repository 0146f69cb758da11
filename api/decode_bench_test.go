package api

import "testing"

// BenchmarkParseRegister is the decoding of a typical registration: the
// member check runs before encoding/json on every request of the hot path.
func BenchmarkParseRegister(b *testing.B) {
	body := []byte(`{"key":"evt_42:crm_task","type":"crm.task.create","event_id":"evt_42","provider_key":null,` +
		`"content":{"owner":"u_9","title":"Follow up","due":"2026-03-02","tags":["a","b"],"amount":12.5},"claim":{"worker":"w-1","lease_seconds":30}}`)
	for b.Loop() {
		if _, err := parseRegister(body); err != nil {
			b.Fatal(err)
		}
	}
}
