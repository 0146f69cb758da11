package web

import (
	"context"
	"encoding/csv"
	"net/http"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
)

// TestDesk_AuditExport: the audit page's Export button, with the page's
// filter, for auditors and admins only; the export is itself audited.
func TestDesk_AuditExport(t *testing.T) {
	d := newDesk(t)
	op := d.register("evt_9:task", "crm.task.create")

	p := d.get("aud", "/desk/audit?operation="+op.ID).want(http.StatusOK)
	link := attr(p.one("audit-export-csv"), "href")
	if !strings.Contains(link, "format=csv") || !strings.Contains(link, "operation="+op.ID) {
		t.Fatalf("the export link does not carry the filter: %q", link)
	}
	if d.get("vic", "/desk/audit").all("audit-export") != nil {
		t.Fatal("a viewer is offered an export")
	}

	exp := d.get("aud", link).want(http.StatusOK)
	if ct := exp.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") ||
		!strings.Contains(exp.header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("not a CSV download: %q %q", ct, exp.header.Get("Content-Disposition"))
	}
	rows, err := csv.NewReader(strings.NewReader(exp.body)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("export is not CSV with rows: %v\n%s", err, exp.body)
	}
	if !strings.Contains(strings.Join(rows[0], ","), "hash") {
		t.Errorf("the header has no chain fields: %v", rows[0])
	}
	if !strings.Contains(exp.body, op.ID) {
		t.Errorf("the operation's events are not in the export")
	}

	d.get("vic", "/desk/audit/export?format=csv").want(http.StatusForbidden)
	d.get("aud", "/desk/audit/export?format=xml").want(http.StatusUnprocessableEntity) // the desk answers bad input with 422

	trail := audit.OfLedger(d.ledger)
	evs, _, err := trail.List(context.Background(), testPeople["aud"], domain.AuditSelect{
		AuditQuery: domain.AuditQuery{Action: domain.ActionAuditExported, Limit: 10}, WithSystem: true})
	if err != nil || len(evs) != 1 || evs[0].Actor.Email != "audra@example.com" {
		t.Fatalf("the export was not audited once, by the auditor: %d events, %v", len(evs), err)
	}
}
