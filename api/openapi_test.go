package api

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"
)

func newTestEngine(t *testing.T, cfg Config) *gin.Engine {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func serveOpenAPI(t *testing.T, e http.Handler) []byte {
	t.Helper()
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest("GET", "/v1/openapi.json", nil))
	if w.Code != 200 || !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		t.Fatalf("GET /v1/openapi.json = %d %s", w.Code, w.Header().Get("Content-Type"))
	}
	return w.Body.Bytes()
}

func TestOpenAPI_valid(t *testing.T) {
	raw := serveOpenAPI(t, newTestEngine(t, Config{}))
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is not valid: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	for _, name := range []string{"Operation", "Problem", "ClaimResponse", "RegisterRequest", "RegisterResponse", "SettleRequest", "Event",
		"BatchRequest", "BatchResponse"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("components/schemas lacks %s", name)
		}
	}
	// Operation must list every member of the wire shape.
	op := doc.Components.Schemas["Operation"].Value
	for _, m := range []string{"id", "state", "lease", "result", "last_error", "links", "approval", "resolution"} {
		if op.Properties[m] == nil {
			t.Errorf("Operation lacks %s", m)
		}
	}
}

// TestOpenAPI_matchesRoutes fails when a route is registered that the
// document does not describe, or the reverse.
func TestOpenAPI_matchesRoutes(t *testing.T) {
	e := newTestEngine(t, Config{})
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(serveOpenAPI(t, e), &doc); err != nil {
		t.Fatal(err)
	}
	var documented, served []string
	for path, item := range doc.Paths {
		for method := range item {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, r := range e.Routes() {
		served = append(served, r.Method+" "+openAPIPath(r.Path))
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Fatalf("document and router differ:\ndocumented %v\nserved     %v", documented, served)
	}
	if len(served) < 25 {
		t.Fatalf("only %d routes served", len(served))
	}
}

func TestOpenAPI_operationIDsUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range routes {
		if seen[r.ID] || r.ID == "" || r.Summary == "" || len(r.Replies) == 0 || r.Handle == nil {
			t.Errorf("route %s %s: duplicate or missing id, summary, replies or handler", r.Method, r.Path)
		}
		seen[r.ID] = true
	}
}

func TestOpenAPI_publicRoutesNeedNoToken(t *testing.T) {
	e := newTestEngine(t, Config{})
	for _, path := range []string{"/healthz", "/readyz", "/metrics", "/v1/openapi.json"} {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest("GET", path, nil))
		body, _ := io.ReadAll(w.Body)
		if w.Code != 200 {
			t.Errorf("GET %s = %d %s", path, w.Code, body)
		}
	}
}

// TestRoutes_authenticated: every route not marked public refuses a caller
// without credentials, before reading any body.
func TestRoutes_authenticated(t *testing.T) {
	e := newTestEngine(t, Config{})
	for _, r := range routes {
		path := strings.NewReplacer(":id", "op_x", ":event_id", "evt_x", ":name", "x").Replace(r.Path)
		w := httptest.NewRecorder()
		e.ServeHTTP(w, httptest.NewRequest(r.Method, path, strings.NewReader("{")))
		if r.Public != (w.Code != http.StatusUnauthorized) {
			t.Errorf("%s %s without credentials: %d (public %v)", r.Method, r.Path, w.Code, r.Public)
		}
	}
}

// TestNew_sharedRegistry: two servers can report into one registry.
func TestNew_sharedRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	newTestEngine(t, Config{Registry: reg})
	newTestEngine(t, Config{Registry: reg})
}

// TestOpenAPI_resendSameKey: the document offers a person's re-send under
// the same provider key, to resolve and to a batch's resolve, and says when.
func TestOpenAPI_resendSameKey(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(serveOpenAPI(t, newTestEngine(t, Config{})))
	if err != nil {
		t.Fatal(err)
	}
	resolve, batch := doc.Components.Schemas["ResolveRequest"], doc.Components.Schemas["BatchRequest"]
	if resolve == nil || batch == nil || batch.Value.Properties["decision"] == nil {
		t.Fatalf("components/schemas lacks ResolveRequest or BatchRequest.decision")
	}
	for name, s := range map[string]*openapi3.SchemaRef{"ResolveRequest": resolve, "BatchRequest.decision": batch.Value.Properties["decision"]} {
		p := s.Value.Properties["action"]
		if p == nil || !slices.Contains(p.Value.Enum, any("resend_same_key")) {
			t.Errorf("%s.action does not offer resend_same_key: %+v", name, p)
		}
	}
	if d := doc.Components.Schemas["ResolveRequest"].Value.Properties["action"].Value.Description; !strings.Contains(d, "provider_key_retention") {
		t.Errorf("ResolveRequest.action says nothing of when a re-send is allowed: %q", d)
	}
}
