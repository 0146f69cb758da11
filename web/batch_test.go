package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

// TestDesk_IncidentBulkDecision: three timeouts of one type make one
// incident beside a validation failure; its items are confirmed not
// executed and retried at once: the preview lists them and records nothing;
// one is decided by someone else meanwhile and is skipped and named; the
// others share the batch_id.
func TestDesk_IncidentBulkDecision(t *testing.T) {
	d := newDesk(t)
	var ops []domain.Operation
	for _, k := range []string{"evt_1:a", "evt_2:a", "evt_3:a"} {
		ops = append(ops, d.intoDesk(k, true))
	}
	d.intoDesk("evt_4:a", false)

	p := d.get("ada", "/desk/incidents").want(http.StatusOK)
	rows := p.all("incident-row")
	if len(rows) != 2 || !strings.Contains(text(rows[0]), "3 items") || !strings.Contains(text(rows[0]), "timeout") ||
		!strings.Contains(text(rows[0]), "campaigns") {
		t.Fatalf("incidents: %d %q", len(rows), p.text("incidents-table"))
	}
	items := attr(p.all("incident-items")[0], "href")
	if got := d.get("ada", items).want(http.StatusOK).all("queue-row"); len(got) != 3 {
		t.Fatalf("the incident's items: %d rows at %s", len(got), items)
	}
	d.get("vic", "/desk/incidents").want(http.StatusOK).none("bulk-incident")

	form := inputs(p.all("bulk-incident")[0])
	form.Set("decision", "not_executed_retry")
	form.Set("reason", "the CRM was down; nothing was created")
	pre := d.post("ada", "/desk/batch/preview", form).want(http.StatusOK)
	if got := pre.text("batch-summary"); !strings.HasPrefix(got, "3 items will be decided, 0 skipped") {
		t.Fatalf("preview: %q", got)
	}
	for _, op := range ops {
		if d.state(op.ID).Version != op.Version {
			t.Fatal("the preview changed an item")
		}
	}
	// The type's provider does not deduplicate and every key was sent: the
	// preview names the risk, and applying without confirming it retries
	// nothing.
	if got := len(pre.all("batch-risk")); got != 3 {
		t.Fatalf("the preview names the retry's risk on %d items, want 3", got)
	}
	pre.one("batch-confirm-risk")
	unconfirmed := inputs(pre.one("batch-apply-form"))
	unconfirmed.Del("confirm_risk")
	if got := d.applyBatch("ada", unconfirmed).text("batch-counts"); got != "0 applied, 3 skipped, 0 failed." {
		t.Fatalf("an unconfirmed risky retry: %q", got)
	}
	for _, op := range ops {
		if d.state(op.ID).Version != op.Version {
			t.Fatal("an unconfirmed risky retry changed an item")
		}
	}
	// Bob decides one of them before Ada applies.
	if _, err := d.ledger.Desk.Resolve(context.Background(), testPeople["bob"], ops[1].ID, domain.Resolve{Action: domain.ResolveConfirmExecuted,
		Result: &domain.Result{Ref: "crm_1"}, Reason: "found it", ExpectedVersion: ops[1].Version}); err != nil {
		t.Fatal(err)
	}
	apply := inputs(pre.one("batch-apply-form"))
	r := d.post("ada", "/desk/batch", apply).want(http.StatusSeeOther)
	res := d.get("ada", r.header.Get("Location")).want(http.StatusOK)
	if got := res.text("batch-counts"); got != "2 applied, 1 skipped, 0 failed." {
		t.Fatalf("result: %q", got)
	}
	if pr := res.one("batch-progress"); attr(pr, "value") != "3" || attr(pr, "max") != "3" {
		t.Fatalf("progress %s of %s, want 3 of 3", attr(pr, "value"), attr(pr, "max"))
	}
	// The result is a page of its own: reading it again applies nothing
	// again, and it is kept in the database, so a colleague reads it on
	// another replica, with who applied it and why.
	versions := map[string]int64{}
	for _, op := range ops {
		versions[op.ID] = d.state(op.ID).Version
	}
	if again := d.get("ada", r.header.Get("Location")).want(http.StatusOK); again.text("batch-counts") != res.text("batch-counts") {
		t.Fatalf("the result read again: %q", again.text("batch-counts"))
	}
	for _, op := range ops {
		if d.state(op.ID).Version != versions[op.ID] {
			t.Fatal("reading the result changed an item")
		}
	}
	other := d.replica(testCards()).get("bob", r.header.Get("Location")).want(http.StatusOK)
	if other.text("batch-counts") != res.text("batch-counts") || len(other.all("batch-row")) != 3 ||
		!strings.HasPrefix(other.text("batch-by"), "Applied by ada@example.com at ") || !strings.Contains(other.text("batch-by"), "“") {
		t.Fatalf("on another replica: %q, %q", other.text("batch-counts"), other.text("batch-by"))
	}
	d.get("ada", "/desk/batch/bat_unknown").want(http.StatusNotFound)
	batchID := res.text("batch-id")
	for _, r := range res.all("batch-row") {
		skipped := attr(r, "data-id") == ops[1].ID
		if (attr(r, "data-outcome") == domain.BatchSkipped) != skipped || (skipped && !strings.Contains(text(r), "resolved by bob@example.com")) {
			t.Fatalf("row %q", text(r))
		}
	}
	for i, op := range ops {
		tl, _ := d.store.Timeline(context.Background(), op.ID)
		var det struct {
			BatchID string `json:"batch_id"`
		}
		_ = json.Unmarshal(tl[len(tl)-1].Detail, &det)
		if (det.BatchID == batchID) != (i != 1) {
			t.Fatalf("item %d: batch_id %q, batch %s", i, det.BatchID, batchID)
		}
	}
	// Bad input changes nothing.
	d.post("ada", "/desk/batch", url.Values{"decision": {"explode"}, "reason": {"x"}, "item": {ops[0].ID + ":1"}}).
		want(http.StatusUnprocessableEntity).one("problem")
	d.post("ada", "/desk/batch", url.Values{"decision": {"note"}, "reason": {"x"}, "item": {"nonsense"}}).
		want(http.StatusUnprocessableEntity).one("problem")
}

// applyBatch posts a batch, which answers 303 to its result, and reads the
// result.
func (d *desk) applyBatch(who string, form url.Values) answer {
	d.t.Helper()
	r := d.post(who, "/desk/batch", form).want(http.StatusSeeOther)
	loc := r.header.Get("Location")
	if !strings.HasPrefix(loc, "/desk/batch/bat_") {
		d.t.Fatalf("the batch redirects to %q, want its result page", loc)
	}
	return d.get(who, loc).want(http.StatusOK)
}

// unkeptStore is the real store with a batch record it cannot keep, as a
// full disk or a lost table would leave it.
type unkeptStore struct{ *store.Store }

func (unkeptStore) KeepBatch(context.Context, domain.BatchRecord) error {
	return domain.Errorf(domain.EUnavailable, "the batch record could not be written")
}

// TestDesk_BatchNotKept: when its record cannot be kept, an applied batch's
// decisions stand, and the result is shown at once instead of redirecting
// to a page that would not exist.
func TestDesk_BatchNotKept(t *testing.T) {
	d := newDesk(t)
	op := d.intoDesk("evt_1:a", true)
	d.ledger.Bulk = domain.NewBulk(unkeptStore{d.store}, d.ledger.Cards)
	form := url.Values{"decision": {"not_executed_cancel"}, "reason": {"the CRM was down"}, "item": {op.ID + ":" + version(op)}}
	res := d.post("ada", "/desk/batch", form).want(http.StatusOK)
	if got := res.text("batch-counts"); got != "1 applied, 0 skipped, 0 failed." {
		t.Fatalf("result: %q", got)
	}
	if got := d.state(op.ID).State; got != domain.Cancelled {
		t.Fatalf("the decision did not stand: %s", got)
	}
	d.get("ada", "/desk/batch/"+res.text("batch-id")).want(http.StatusNotFound)
}

// TestDesk_BatchOutlivesItsClient: a batch whose client went away — its
// request's context cancelled — is applied to every item and kept, not cut
// off half way and answered as a database failure.
func TestDesk_BatchOutlivesItsClient(t *testing.T) {
	d := newDesk(t)
	form := url.Values{"decision": {"not_executed_cancel"}, "reason": {"the CRM was down"}}
	var ids []string
	for _, k := range []string{"evt_1:a", "evt_2:a", "evt_3:a"} {
		op := d.intoDesk(k, true)
		ids = append(ids, op.ID)
		form.Add("item", op.ID+":"+version(op))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client is gone before the batch runs
	req := httptest.NewRequest("POST", "/desk/batch", strings.NewReader(form.Encode())).WithContext(ctx)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Test-Person", "ada")
	w := httptest.NewRecorder()
	d.engine.ServeHTTP(w, req)
	if w.Code != http.StatusSeeOther || !strings.HasPrefix(w.Header().Get("Location"), "/desk/batch/bat_") {
		t.Fatalf("status %d, Location %q: %.300s", w.Code, w.Header().Get("Location"), w.Body.String())
	}
	for _, id := range ids {
		if got := d.state(id).State; got != domain.Cancelled {
			t.Errorf("%s: %s, want cancelled", id, got)
		}
	}
	kept, err := d.ledger.Bulk.KeptBatch(context.Background(), testPeople["ada"], strings.TrimPrefix(w.Header().Get("Location"), "/desk/batch/"))
	if err != nil || kept.Result.Applied != len(ids) {
		t.Fatalf("kept %+v, %v", kept.Result, err)
	}
}
