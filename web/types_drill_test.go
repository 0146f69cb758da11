package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
)

func TestDesk_Types_TemplateFields(t *testing.T) {
	d := newDesk(t)
	crm := d.ledger.Cards["crm.task.create"]
	crm.RetryLayer, crm.ReconciliationOwner, crm.IDRule, crm.Receipts = domain.RetryByHandoff, "crm-oncall", "<event_id>:crm_task", "receipts/crm"
	crm.Drill = domain.DrillSettings{Adapter: domain.DrillAdapterSandbox}
	d.ledger.Cards[crm.Name] = crm
	p := d.get("vic", "/desk/types").want(http.StatusOK)
	for _, f := range []string{"retry_layer", "reconciliation_owner", "id_rule", "drill", "receipts"} {
		if len(p.all("card-field-"+f)) != 2 {
			t.Fatalf("card field %s missing", f)
		}
	}
	fields := p.all("card-field-drill")
	if !strings.Contains(text(fields[1]), "sandbox (idempotency none, lookup unsure)") || strings.Contains(attr(fields[1], "class"), "warn") {
		t.Fatalf("crm's drill field: %q", text(fields[1]))
	}
	if !strings.Contains(attr(fields[0], "class"), "warn") || !strings.Contains(text(fields[0]), "cannot be drilled") {
		t.Fatalf("coupon has no sandbox adapter and must be flagged: %q", text(fields[0]))
	}
	if got := text(p.all("card-field-id_rule")[1]); !strings.Contains(got, "<event_id>:crm_task") {
		t.Fatalf("id_rule: %q", got)
	}
	// The twins line names every state the ledger holds a twin for.
	twins := text(p.all("card-field-twins")[0])
	for _, st := range domain.TwinStates {
		if !strings.Contains(twins, st.String()) {
			t.Errorf("the twins line leaves out %s: %q", st, twins)
		}
	}
}

func TestDesk_Types_LastDrill(t *testing.T) {
	d := newDesk(t)
	d.ledger.Drills.Reader = d.store
	for name, sha := range map[string]string{"crm.task.create": "sha-crm-v2", "coupon.issue": "sha-coupon-v2"} {
		c := d.ledger.Cards[name]
		c.Version, c.SHA256 = 2, sha
		d.ledger.Cards[name] = c
	}
	p := d.get("vic", "/desk/types").want(http.StatusOK)
	if n := len(p.all("not-drilled")); n != 2 {
		t.Fatalf("with no drills both types are not drilled, got %d", n)
	}
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 9, 15, 0, 0, time.UTC)
	save := func(id, typ, sha, verdict string, version int, when time.Time) {
		t.Helper()
		rec := domain.DrillRecord{ID: id, Type: typ, CardVersion: version, CardSHA256: sha, Verdict: verdict, SHA256: "h-" + id, RanBy: "alice", RanAt: when}
		e := domain.SystemEvent(ctx, &domain.IDSource{}, when, domain.System, "drill_recorded", "", map[string]any{"receipt_id": id, "sha256": "h-" + id})
		if _, err := d.store.SaveDrill(ctx, rec, []byte(`{"id":"`+id+`"}`), e); err != nil {
			t.Fatal(err)
		}
	}
	// crm passed its drill as loaded now; coupon passed an older card, then
	// failed on the current one.
	save("drl_crm", "crm.task.create", "sha-crm-v2", "pass", 2, at)
	save("drl_coupon_old", "coupon.issue", "sha-coupon-v1", "pass", 1, at.Add(-time.Hour))
	save("drl_coupon_new", "coupon.issue", "sha-coupon-v2", "fail", 2, at.Add(time.Minute))

	p = d.get("vic", "/desk/types").want(http.StatusOK)
	status := p.all("drill-status")
	if len(status) != 2 {
		t.Fatalf("%d drill lines", len(status))
	}
	coupon, crm := text(status[0]), text(status[1])
	if !strings.Contains(crm, "drilled") || strings.Contains(crm, "not drilled") || !strings.Contains(crm, "last drill: 2026-11-30 09:15:00 UTC, pass") {
		t.Fatalf("crm: %q", crm)
	}
	if !strings.Contains(coupon, "not drilled") || !strings.Contains(coupon, "last drill: 2026-11-30 09:16:00 UTC, fail") ||
		!strings.Contains(coupon, "changed since its last passing drill (card version 1 then, 2 now)") {
		t.Fatalf("coupon: %q", coupon)
	}
	r := d.get("vic", "/desk/drills/drl_crm").want(http.StatusOK)
	if r.header.Get("X-Receipt-SHA256") != "h-drl_crm" || !strings.Contains(r.body, `"drl_crm"`) {
		t.Fatalf("receipt: %v %s", r.header, r.body)
	}
	d.get("vic", "/desk/drills/drl_nope").want(http.StatusNotFound)
}
