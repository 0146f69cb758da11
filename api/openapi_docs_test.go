package api

import (
	"reflect"
	"testing"
)

// TestOpenAPI_described: every route and tag says more than its summary,
// and the document names its server, so generators and linters can use it.
func TestOpenAPI_described(t *testing.T) {
	doc := openAPIDocument(routes)
	for _, r := range routes {
		if routeDescriptions[r.ID] == "" {
			t.Errorf("route %s %s (%s) has no description", r.Method, r.Path, r.ID)
		}
		if tagDescriptions[r.Tag] == "" {
			t.Errorf("tag %q has no description", r.Tag)
		}
	}
	if servers, _ := doc["servers"].([]any); len(servers) == 0 {
		t.Error("the document names no server")
	}
}

// TestOpenAPI_freeFormObjects: content and result data admit any members;
// a bare "type: object" reads as "no members" to code generators.
func TestOpenAPI_freeFormObjects(t *testing.T) {
	set := schemaSet{}
	set.schemaOf(reflect.TypeFor[registerRequest](), true)
	content := set["RegisterRequest"].(map[string]any)["properties"].(map[string]any)["content"].(map[string]any)
	if content["additionalProperties"] != true {
		t.Errorf("RegisterRequest.content = %v, want additionalProperties: true", content)
	}
}
