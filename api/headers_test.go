package api_test

import "testing"

// TestHeaders_V1NoSniffNoStore: every /v1 answer — one carrying content or
// a result, a list, a problem — is nosniff and no-store.
func TestHeaders_V1NoSniffNoStore(t *testing.T) {
	x := newHarness(t)
	op := x.register("k-headers", "crm.task.create", nil)
	for _, r := range []*reply{
		x.do("POST", "/v1/operations", x.tok, map[string]any{"key": "k-headers", "type": "crm.task.create",
			"content": map[string]any{"n": "k-headers"}}),
		x.do("GET", opPath(op, ""), x.tok, nil),
		x.do("GET", "/v1/operations?key=k-headers", x.tok, nil),
		x.do("GET", opPath(op, "timeline"), x.tok, nil),
		x.do("GET", "/v1/operations/op_missing", x.tok, nil),
		x.do("POST", "/v1/operations", x.tok, `{"key":`),
		x.do("GET", "/v1/operations", "", nil),
	} {
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%d %s: X-Content-Type-Options %q", r.code, r.raw, got)
		}
		if got := r.header.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%d %s: Cache-Control %q", r.code, r.raw, got)
		}
	}
}
