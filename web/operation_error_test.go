package web

import (
	"net/http"
	"strings"
	"testing"
)

// TestDesk_ErrorOnceAboveDecide: the last error is shown once before the
// decision — in the evidence, cut to a few lines and whole on focus — not
// again in red between the evidence and the Decide heading.
func TestDesk_ErrorOnceAboveDecide(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_once:crm_task", false)
	p := d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)
	decide := strings.Index(p.body, `id="h-actions"`)
	if decide < 0 {
		t.Fatal("no Decide heading")
	}
	if n := strings.Count(p.body[:decide], "owner u_9 does not exist"); n != 1 {
		t.Fatalf("the error is shown %d times above Decide", n)
	}
	clamped := false
	for n := p.one("evidence-last-error").FirstChild; n != nil; n = n.NextSibling {
		clamped = clamped || attr(n, "class") == "clamp"
	}
	if !clamped {
		t.Fatal("the evidence's error is not cut to a few lines")
	}
}
