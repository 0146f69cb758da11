package api_test

import (
	"testing"
)

// TestIncidents_List: people read the incidents; a workflow token is
// refused; no incident carries an item's content.
func TestIncidents_List(t *testing.T) {
	x := newPeopleRig(t)
	x.unknownOutcome("inc-1")
	x.unknownOutcome("inc-2")
	x.failedTerminal("inc-3")
	x.do("GET", "/v1/incidents", x.tok, nil).problem(403, "forbidden")
	got := x.do("GET", "/v1/incidents", x.jwt["viewer"], nil).ok(200)
	items := got["items"].([]any)
	if len(items) != 2 {
		t.Fatalf("incidents: %v", got)
	}
	first := items[0].(map[string]any)
	if first["open_items"] != float64(2) || first["total_items"] != float64(2) || first["status"] != "open" ||
		first["error_class"] != "timeout" || first["desk_path"] != "/desk/incidents/"+first["id"].(string) ||
		first["states"].([]any)[0] != "unknown_outcome" || first["owner"] != nil || first["content"] != nil {
		t.Fatalf("the largest incident: %v", first)
	}
}
