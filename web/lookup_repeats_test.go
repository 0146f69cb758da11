package web

import (
	"reflect"
	"testing"

	"github.com/opshandoff/handoff/views/pages"
)

// Tries in a row with the same request and answer fold into one row with
// their count, the first's time and the last's; a different one between
// them starts a row of its own.
func TestGroupTries(t *testing.T) {
	try := func(at, summary string) pages.LookupTryRow {
		return pages.LookupTryRow{At: at, Request: "GET https://crm.example/v1/tasks?key=k", Summary: summary}
	}
	got := groupTries([]pages.LookupTryRow{try("10:00", "503 error"), try("10:01", "503 error"), try("10:02", "503 error"),
		try("10:03", "404 not_found"), try("10:04", "503 error")})
	want := []pages.LookupTryRow{
		{At: "10:00", Request: "GET https://crm.example/v1/tasks?key=k", Summary: "503 error", Count: 3, Last: "10:02"},
		{At: "10:03", Request: "GET https://crm.example/v1/tasks?key=k", Summary: "404 not_found", Count: 1},
		{At: "10:04", Request: "GET https://crm.example/v1/tasks?key=k", Summary: "503 error", Count: 1},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("grouped:\n%+v\nwant\n%+v", got, want)
	}
}
