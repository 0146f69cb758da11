package lookup_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/lookup"
)

func TestRead(t *testing.T) {
	list := domain.LookupAdapter{Found: domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", WhenNonempty: "/data",
		State: "/data/0/status", DoneStates: []string{"succeeded"},
		Compare: []domain.LookupCompare{{Answer: "/data/0/amount", Content: "/amount"}, {Answer: "/data/0/metadata/a~1b", Content: "/tag"}}},
		NotFoundStatus: []int{404}}
	op := domain.Operation{Content: json.RawMessage(`{"amount":1200,"tag":"x"}`)}
	record := func(amount, status string) string {
		return `{"object":"list","data":[{"id":"pi_1","amount":` + amount + `,"status":"` + status + `","metadata":{"a/b":"x"}}]}`
	}
	cases := []struct {
		name   string
		status int
		body   string
		op     domain.Operation
		want   domain.LookupResult
		detail string
	}{
		{"found", 200, record("1200", "succeeded"), op, domain.LookupFoundDone, "pi_1"},
		{"numbers by value", 200, record("1200.0", "succeeded"), op, domain.LookupFoundDone, "pi_1"},
		{"an empty search is a not-found", 200, `{"object":"list","data":[]}`, op, domain.LookupNotFound, "/data is empty"},
		{"not found status", 404, `{"error":{}}`, op, domain.LookupNotFound, ""},
		{"other content is a conflict", 200, record("999", "succeeded"), op, domain.LookupConflict, "/data/0/amount"},
		{"not done yet", 200, record("1200", "processing"), op, domain.LookupUnsure, "not in a done state"},
		{"no reference", 200, `{"data":[{"amount":1200,"status":"succeeded","metadata":{"a/b":"x"}}]}`, op, domain.LookupUnsure, "no provider reference"},
		{"not JSON", 200, `<html>`, op, domain.LookupUnsure, "not JSON"},
		{"purged content cannot be compared", 200, record("1200", "succeeded"), domain.Operation{ContentPurgedAt: &time.Time{}}, domain.LookupUnsure, "no longer kept"},
		{"server error", 503, ``, op, domain.LookupError, "503"},
		{"redirect not followed", 302, ``, op, domain.LookupUnsure, "neither found nor not found"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := lookup.Read(list, c.status, []byte(c.body), c.op)
			text := r.Ref + " " + r.Note + " " + strings.Join(r.Conflicts, ",")
			if r.Result != c.want || !strings.Contains(text, c.detail) {
				t.Fatalf("%+v, want %s with %q", r, c.want, c.detail)
			}
		})
	}
}

// TestReadBinds: a found record is bound to the operation by its provider
// key at found.key or by compare rules that matched; a record with another
// key, or none, is unsure; without either rule a found is left unbound.
func TestReadBinds(t *testing.T) {
	keyed := domain.LookupAdapter{Found: domain.LookupFound{Status: []int{200}, Ref: "/data/0/id", Key: "/data/0/metadata/handoff_key",
		WhenNonempty: "/data"}}
	op := domain.Operation{ProviderKey: "hk_1", Content: json.RawMessage(`{"amount":1200}`)}
	rec := func(key string) []byte {
		return []byte(`{"data":[{"id":"pi_1","metadata":{"handoff_key":` + key + `}}]}`)
	}
	if r := lookup.Read(keyed, 200, rec(`"hk_1"`), op); r.Result != domain.LookupFoundDone || r.Bound != domain.BoundByKey {
		t.Fatalf("its key: %+v", r)
	}
	if r := lookup.Read(keyed, 200, rec(`"hk_2"`), op); r.Result != domain.LookupUnsure || r.Bound != "" || !strings.Contains(r.Note, "another provider key") {
		t.Fatalf("another key: %+v", r)
	}
	if r := lookup.Read(keyed, 200, []byte(`{"data":[{"id":"LIE-1"}]}`), op); r.Result != domain.LookupUnsure || r.Bound != "" || !strings.Contains(r.Note, "no provider key at") {
		t.Fatalf("no key: %+v", r)
	}
	cmp := keyed
	cmp.Found.Key, cmp.Found.Compare = "", []domain.LookupCompare{{Answer: "/data/0/amount", Content: "/amount"}}
	if r := lookup.Read(cmp, 200, []byte(`{"data":[{"id":"pi_1","amount":1200}]}`), op); r.Result != domain.LookupFoundDone || r.Bound != domain.BoundByCompare {
		t.Fatalf("compared: %+v", r)
	}
	none := keyed
	none.Found.Key = ""
	if r := lookup.Read(none, 200, []byte(`{"data":[{"id":"LIE-1"}]}`), op); r.Bound != "" {
		t.Fatalf("nothing binds it: %+v", r)
	}
}

func TestPointer(t *testing.T) {
	var doc any
	_ = json.Unmarshal([]byte(`{"a/b":{"m~n":[10,20]},"":1}`), &doc)
	for p, want := range map[string]any{"/a~1b/m~0n/1": 20.0, "/": 1.0} {
		if v, ok := lookup.Pointer(doc, p); !ok || v != want {
			t.Errorf("%s = %v %v, want %v", p, v, ok, want)
		}
	}
	for _, p := range []string{"/a~1b/m~0n/2", "/a~1b/m~0n/01", "/x", "a"} {
		if v, ok := lookup.Pointer(doc, p); ok {
			t.Errorf("%s resolved to %v", p, v)
		}
	}
}
