package lookup_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/lookup"
)

// TestLookRefusesAValueThatWalksThePath: a placeholder value that makes a
// path segment "..", "." or empty, or a query value empty, is refused: the
// request is not made (the adapter's secret goes nowhere) and the try says
// why. A value with a slash stays in its segment.
func TestLookRefusesAValueThatWalksThePath(t *testing.T) {
	var hits atomic.Int64
	var lastPath atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		lastPath.Store(r.URL.EscapedPath())
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"u_1","key":"hk_1"}`))
	}))
	defer srv.Close()
	a := domain.LookupAdapter{Method: "GET", URL: srv.URL + "/api/users/{content.p}/messages?q={content.q}", AuthEnv: "TOKEN",
		Found: domain.LookupFound{Status: []int{200}, Ref: "/id", Key: "/key"}}
	l := lookup.New(true, func(string) string { return "sk_secret" })
	look := func(p, q string) domain.LookupTry {
		content, _ := json.Marshal(map[string]string{"p": p, "q": q})
		return l.Look(context.Background(), a, domain.Operation{ProviderKey: "hk_1", Content: content})
	}
	for _, p := range []string{"..", ".", ""} {
		try := look(p, "x")
		if try.Result != domain.LookupError || !strings.Contains(try.Error, "refused, it would walk the URL path") || hits.Load() != 0 {
			t.Fatalf("p=%q: %+v, %d requests made", p, try, hits.Load())
		}
	}
	if try := look("u", ""); try.Result != domain.LookupError || !strings.Contains(try.Error, "{content.q} is empty") || hits.Load() != 0 {
		t.Fatalf("an empty query value: %+v, %d requests made", try, hits.Load())
	}
	if try := look("../x", "y"); try.Result != domain.LookupFoundDone || hits.Load() != 1 || lastPath.Load() != "/api/users/..%2Fx/messages" {
		t.Fatalf("a slash stays in its segment: %+v, path %v", try, lastPath.Load())
	}
}
