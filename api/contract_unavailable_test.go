package api_test

import (
	"testing"
)

// TestContract_DatabaseDown: when the database cannot be reached, a
// workflow call answers 503 unavailable with Retry-After — never a 500, and
// never the driver's error text.
func TestContract_DatabaseDown(t *testing.T) {
	x := newHarness(t)
	if err := x.store.Close(); err != nil {
		t.Fatal(err)
	}
	r := x.do("POST", "/v1/operations", x.tok, `{"key":"evt_1:task","type":"crm.task.create","content":{"a":1}}`)
	r.problem(503, "unavailable")
	if r.header.Get("Retry-After") == "" {
		t.Fatalf("no Retry-After: %v", r.header)
	}
}
