package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

func version(op domain.Operation) string { return strconv.FormatInt(op.Version, 10) }

func TestDesk_OperationPage(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:crm_task", true)
	sibling := d.register("evt_1:notify", "crm.task.create")
	p := d.get("ada", "/desk/operations/"+op.ID).want(http.StatusOK)

	if p.text("op-key") != "evt_1:crm_task" || attr(p.one("op-status").FirstChild, "data-state") != "unknown_outcome" {
		t.Fatalf("header: %q", p.text("op-status"))
	}
	if !strings.Contains(p.text("next-decision"), "confirm whether it was executed") {
		t.Fatalf("next decision: %q", p.text("next-decision"))
	}
	if got := p.text("content-json"); !strings.Contains(got, `"owner": "u_9"`) {
		t.Fatalf("pretty content: %q", got)
	}
	if p.text("content-hash") != op.ContentSHA256 || p.text("provider-key") != op.ProviderKey {
		t.Fatal("hash or provider key missing")
	}
	if n := len(p.all("attempt-row")); n != 1 {
		t.Fatalf("%d attempts", n)
	}
	evs := p.all("timeline-event")
	if len(evs) != 4 || attr(evs[3], "data-action") != "settled" || !strings.Contains(text(evs[0]), "workflow shop") {
		t.Fatalf("timeline: %d events", len(evs))
	}
	if href := attr(p.one("lookup-link"), "href"); href != "https://crm.example.com/tasks?external_id="+url.QueryEscape(op.ProviderKey) {
		t.Fatalf("lookup link: %q", href)
	}
	if !strings.Contains(p.text("retention"), "does not deduplicate") {
		t.Fatalf("retention: %q", p.text("retention"))
	}
	p.one("unverified")
	if rel := p.text("related"); !strings.Contains(rel, sibling.Key) || strings.Contains(rel, op.Key) {
		t.Fatalf("related: %q", rel)
	}
	// unknown_outcome offers confirm executed / not executed, assign, note —
	// and neither retry, cancel nor a revision.
	for _, id := range []string{"form-confirm-executed", "form-confirm-not-executed", "form-assign", "form-note"} {
		p.one(id)
	}
	for _, id := range []string{"form-retry", "form-cancel", "form-revise", "form-approve"} {
		p.none(id)
	}
	if in := inputs(p.one("form-confirm-executed")); in.Get("expected_version") != version(op) || in.Get("action") != "confirm_executed" {
		t.Fatalf("the form does not carry the version seen: %v", in)
	}
	// The htmx fragment and a viewer's page.
	d.get("ada", "/desk/operations/"+op.ID, "HX-Request", "true").want(http.StatusOK).fragment().one("timeline")
	v := d.get("vic", "/desk/operations/"+op.ID).want(http.StatusOK)
	v.none("form-confirm-executed")
	v.none("form-note")
}

func TestDesk_OperationStates(t *testing.T) {
	d := newDesk(t)
	failed := d.intoDesk("evt_2:crm_task", false)
	p := d.get("ada", "/desk/operations/"+failed.ID).want(http.StatusOK)
	for _, id := range []string{"form-retry", "form-cancel", "form-revise", "form-assign", "form-note"} {
		p.one(id)
	}
	p.none("form-confirm-executed")

	coupon := d.register("evt_3:coupon", "coupon.issue")
	p = d.get("ada", "/desk/operations/"+coupon.ID).want(http.StatusOK)
	p.one("approval-forms")
	p.none("own-revision")
	if !strings.Contains(p.text("next-decision"), "approves or rejects content version 1") {
		t.Fatalf("next: %q", p.text("next-decision"))
	}
}

func TestDesk_Retention(t *testing.T) {
	first := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	card := domain.Card{Name: "email.send", Provider: "mailer", ProviderIdempotency: domain.IdempotencyKey,
		ProviderKeyRetention: 24 * time.Hour}
	it := domain.DeskItem{Op: domain.Operation{ProviderKeyFirstSentAt: &first}, Card: card, Now: first.Add(2 * time.Hour)}
	if r := retention(it); r.Expired || !strings.Contains(r.Text, "another 22 h 0 m") {
		t.Fatalf("inside the window: %+v", r)
	}
	it.Now = first.Add(30 * time.Hour)
	r := retention(it)
	if !r.Expired || !strings.Contains(r.Text, "left its 24h0m0s retention window 6 h 0 m ago") {
		t.Fatalf("outside the window: %+v", r)
	}
	// The warning reaches the page.
	v := operationView(it, testPeople["ada"])
	var b strings.Builder
	if err := pages.OperationBody(v).Render(t.Context(), &b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `data-testid="retention-expired"`) {
		t.Fatal("no retention warning on the page")
	}
}
