package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestDesk_SignInRequired(t *testing.T) {
	d := newDesk(t)
	p := d.get("", "/desk/queue?q=x").want(http.StatusSeeOther)
	if loc := p.header.Get("Location"); loc != "/auth/login?next="+url.QueryEscape("/desk/queue?q=x") {
		t.Fatalf("redirected to %q", loc)
	}
	p = d.get("", "/desk/queue?q=x", "HX-Request", "true").want(http.StatusUnauthorized)
	if loc := p.header.Get("HX-Redirect"); !strings.HasPrefix(loc, "/auth/login?next=") {
		t.Fatalf("htmx told to go to %q", loc)
	}
	d.post("", "/desk/operations/x/notes", url.Values{"text": {"hi"}}).want(http.StatusSeeOther)
}

func TestDesk_Overview(t *testing.T) {
	d := newDesk(t)
	p := d.get("ada", "/desk").want(http.StatusOK)
	p.one("overview-oldest")
	if got := p.text("count-desk"); !strings.HasPrefix(got, "0 ") {
		t.Fatalf("empty desk: %q", got)
	}
	first := d.intoDesk("evt_1:crm_task", true)
	d.intoDesk("evt_2:crm_task", false)
	d.register("evt_3:crm_task", "crm.task.create")

	p = d.get("ada", "/desk").want(http.StatusOK)
	if got := p.text("count-desk"); !strings.HasPrefix(got, "2 ") {
		t.Fatalf("desk count: %q", got)
	}
	if got := p.text("count-entered"); !strings.HasPrefix(got, "2 ") {
		t.Fatalf("entered count: %q", got)
	}
	if got := p.text("state-count-unknown_outcome"); !strings.HasSuffix(got, " 1") {
		t.Fatalf("unknown_outcome count: %q", got)
	}
	if got := p.text("state-count-received"); !strings.HasSuffix(got, " 1") {
		t.Fatalf("received count: %q", got)
	}
	if got := p.text("overview-oldest"); !strings.Contains(got, first.Key) {
		t.Fatalf("oldest: %q", got)
	}
	if n := len(p.all("entry-row")); n != 2 {
		t.Fatalf("%d entries in the last 24 h, want 2", n)
	}
	rows := chartRows(p, "overview-chart")
	if len(rows) != 24 || strings.Join(rows[23], " ") != "1–0 h ago 2 0" || chartSum(p, "overview-chart", 1) != 2 {
		t.Fatalf("chart rows: %q", rows)
	}
	// The 30-second refresh gets the body alone.
	f := d.get("ada", "/desk", "HX-Request", "true").want(http.StatusOK).fragment()
	f.one("overview-states")
	f.one("overview-chart")
}

func TestDesk_Types(t *testing.T) {
	d := newDesk(t)
	p := d.get("vic", "/desk/types").want(http.StatusOK)
	if n := len(p.all("card")); n != 2 {
		t.Fatalf("%d cards, want 2", n)
	}
	if got := p.text("unverified"); !strings.Contains(got, "Does the CRM dedupe external_id across workspaces?") {
		t.Fatalf("unverified: %q", got)
	}
	idem := p.all("card-field-provider_idempotency")
	if len(idem) != 2 || !strings.Contains(attr(idem[0], "class"), "warn") || !strings.Contains(text(idem[0]), "may do it again") {
		t.Fatalf("provider_idempotency none is not highlighted: %v", idem)
	}
	for _, f := range []string{"lookup", "lookup_authoritative", "retry", "lease", "owner", "provider_key_retention"} {
		if len(p.all("card-field-"+f)) != 2 {
			t.Fatalf("card field %s missing", f)
		}
	}
	if got := text(p.all("card-field-retry")[1]); !strings.Contains(got, "at most 3 attempts within 1h") {
		t.Fatalf("retry explained: %q", got)
	}
	if n := len(d.get("vic", "/desk/types", "HX-Request", "true").want(http.StatusOK).fragment().all("card")); n != 2 {
		t.Fatalf("fragment: %d cards", n)
	}
}

func TestDesk_Audit(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	d.intoDesk("evt_2:crm_task", false)
	d.post("ada", "/desk/operations/"+op.ID+"/notes", url.Values{"text": {"calling the CRM"}}).want(http.StatusSeeOther)

	p := d.get("vic", "/desk/audit").want(http.StatusOK)
	rows := p.all("audit-row")
	// The newest first: Ada's note, then the last settle.
	if len(rows) != 8 || attr(rows[0], "data-action") != "noted" || !strings.Contains(text(rows[0]), "Ada Lovelace <ada@example.com>") ||
		attr(rows[7], "data-action") != "registered" {
		t.Fatalf("%d rows; first %q", len(rows), text(rows[0]))
	}
	p.one("audit-filter")

	f := d.get("vic", "/desk/audit?actor=ada@example.com", "HX-Request", "true").want(http.StatusOK).fragment()
	if rows := f.all("audit-row"); len(rows) != 1 || !strings.Contains(text(rows[0]), "calling the CRM") {
		t.Fatalf("by actor: %d", len(rows))
	}
	f = d.get("vic", "/desk/audit?action=settled&operation="+op.ID).want(http.StatusOK)
	if rows := f.all("audit-row"); len(rows) != 1 {
		t.Fatalf("by action and operation: %d", len(rows))
	}
	f = d.get("vic", "/desk/audit?from=2999-01-01T00:00").want(http.StatusOK)
	f.one("audit-empty")
	f = d.get("vic", "/desk/audit?to=yesterday").want(http.StatusOK)
	if !strings.Contains(f.text("audit-problem"), "to: must be a time") {
		t.Fatalf("bad time: %q", f.text("audit-problem"))
	}
	// Paging: a page of 50 with a next link when there is more.
	for i := range 60 {
		d.post("ada", "/desk/operations/"+op.ID+"/notes", url.Values{"text": {"n" + strconv.Itoa(i)}}).want(http.StatusSeeOther)
	}
	p = d.get("vic", "/desk/audit?action=noted").want(http.StatusOK)
	next := attr(p.one("next-page"), "href")
	if rows := p.all("audit-row"); len(rows) != 50 || !strings.Contains(next, "action=noted") || !strings.Contains(text(rows[0]), "n59") {
		t.Fatalf("page 1: %d rows, the first %q, next %q", len(rows), text(rows[0]), next)
	}
	p = d.get("vic", next).want(http.StatusOK)
	if rows := p.all("audit-row"); len(rows) != 11 || !strings.Contains(text(rows[0]), "n9") || !strings.Contains(text(rows[10]), "calling the CRM") {
		t.Fatalf("page 2: %d rows, the first %q", len(rows), text(rows[0]))
	}
	p.none("next-page")
}

func TestDesk_NotFound(t *testing.T) {
	d := newDesk(t)
	p := d.get("ada", "/desk/operations/op_nope").want(http.StatusNotFound)
	if got := p.text("problem"); got != "no such operation" {
		t.Fatalf("problem: %q", got)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Fatalf("CSP: %q", csp)
	}
	f := d.get("ada", "/desk/operations/op_nope", "HX-Request", "true").want(http.StatusNotFound).fragment()
	f.one("problem")
}
