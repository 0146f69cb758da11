package sandbox_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/sandbox"
)

// TestRecords: the provider-shaped lookups — a list with data[] that is
// empty when nothing matched and lags by the configured reads (and by a
// key's own lag), a record by ID or 404 — each record with the params it
// was executed with, and every read counted.
func TestRecords(t *testing.T) {
	sb, _ := sandbox.New(sandbox.Config{Lookup: sandbox.LookupUnsure, IndexLagReads: 1})
	srv := httptest.NewServer(sb.Handler())
	defer srv.Close()
	get := func(path string, out any) int {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		_ = json.NewDecoder(resp.Body).Decode(out)
		return resp.StatusCode
	}
	resp, err := http.Post(srv.URL+"/execute", "application/json", strings.NewReader(`{"key":"k1","params":{"subject":"call"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var list sandbox.RecordList
	if code := get("/v1/records?external_id=k1", &list); code != 200 || list.Object != "list" || len(list.Data) != 0 {
		t.Fatalf("the lagging index's first read: %d %+v", code, list)
	}
	if code := get("/v1/records?external_id=k1", &list); code != 200 || len(list.Data) != 1 || list.Data[0].ID != "sbx_1" ||
		list.Data[0].ExternalID != "k1" || string(list.Data[0].Params) != `{"subject":"call"}` {
		t.Fatalf("the second read: %d %+v", code, list)
	}
	var rec sandbox.Record
	if code := get("/v1/records/k1", &rec); code != 200 || rec.ID != "sbx_1" || rec.Status != "completed" {
		t.Fatalf("by ID: %d %+v", code, rec)
	}
	if code := get("/v1/records/nope", &rec); code != 404 {
		t.Fatalf("an unknown ID: %d", code)
	}
	if n := sb.Lookups("k1"); n != 3 {
		t.Fatalf("%d reads of k1 counted, want 3", n)
	}
	sb.LagIndex("k1", 5)
	if get("/v1/records?external_id=k1", &list); len(list.Data) != 0 {
		t.Fatal("a key's own lag is not applied")
	}
	off, _ := sandbox.New(sandbox.Config{})
	srv2 := httptest.NewServer(off.Handler())
	defer srv2.Close()
	if r, _ := http.Get(srv2.URL + "/v1/records/k1"); r.StatusCode != 404 {
		t.Fatalf("a provider without lookups: %d", r.StatusCode)
	}
}
