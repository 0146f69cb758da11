package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
)

// saveDrill stores a receipt as `handoff drill` does: the row and its
// drill_recorded event in one transaction.
func (x *auditFixture) saveDrill(id, verdict string) domain.DrillRecord {
	x.t.Helper()
	text := []byte(`{"id":"` + id + `","type":"crm.task.create","verdict":"` + verdict + `"}` + "\n")
	rec := domain.DrillRecord{ID: id, Type: "crm.task.create", CardVersion: 2, CardSHA256: "c0ffee", Verdict: verdict,
		SHA256: domain.SHA256Hex(text), RanBy: "alice@example.com", RanAt: time.Now().Add(-time.Minute)}
	actor := domain.Actor{Kind: domain.ActorSystem, Name: rec.RanBy}
	if _, err := x.s.SaveDrill(context.Background(), rec, text, domain.DrillRecordedEvent(context.Background(), x.l.IDs, time.Now(), actor, rec)); err != nil {
		x.t.Fatal(err)
	}
	return rec
}

// TestAuditVerify_drillReceipts: `audit verify --db` compares every stored
// drill receipt — its text and the columns the Types page reads — with the
// hash and fields its drill_recorded event chained. A receipt edited,
// deleted or added in the database is reported, naming the receipt.
func TestAuditVerify_drillReceipts(t *testing.T) {
	cases := map[string]struct {
		tamper func(x *auditFixture)
		kind   audit.BreakKind
		says   string
	}{
		"text edited": {func(x *auditFixture) {
			store.ExecRaw(x.t, x.s, "UPDATE drill_receipts SET receipt = replace(receipt, 'fail', 'pass') WHERE id = 'drl_b'")
		}, audit.BreakEdited, "drl_b was edited after the drill: its text's sha256"},
		"verdict column edited": {func(x *auditFixture) {
			store.ExecRaw(x.t, x.s, "UPDATE drill_receipts SET verdict = 'pass' WHERE id = 'drl_b'")
		}, audit.BreakEdited, `its verdict is "pass", the event recorded "fail"`},
		"card hash edited": {func(x *auditFixture) {
			store.ExecRaw(x.t, x.s, "UPDATE drill_receipts SET card_sha256 = 'beef' WHERE id = 'drl_a'")
		}, audit.BreakEdited, "card_sha256"},
		"ran_at moved": {func(x *auditFixture) {
			store.ExecRaw(x.t, x.s, "UPDATE drill_receipts SET ran_at = ? WHERE id = 'drl_a'", time.Now().Add(time.Hour).UTC())
		}, audit.BreakEdited, "ran_at"},
		"text and hash column rewritten together": {func(x *auditFixture) {
			forged := `{"id":"drl_b","type":"crm.task.create","verdict":"pass"}` + "\n"
			store.ExecRaw(x.t, x.s, "UPDATE drill_receipts SET receipt = ?, sha256 = ?, verdict = 'pass' WHERE id = 'drl_b'",
				forged, domain.SHA256Hex([]byte(forged)))
		}, audit.BreakEdited, "drl_b was edited"},
		"deleted": {func(x *auditFixture) {
			store.ExecRaw(x.t, x.s, "DELETE FROM drill_receipts WHERE id = 'drl_b'")
		}, audit.BreakDeleted, "drl_b (crm.task.create, verdict fail), chained by this event, is no longer stored"},
		"added": {func(x *auditFixture) {
			store.ExecRaw(x.t, x.s, "INSERT INTO drill_receipts (id, type, card_version, card_sha256, verdict, sha256, ran_by, ran_at, receipt) "+
				"SELECT 'drl_forged', type, card_version, card_sha256, 'pass', sha256, ran_by, ran_at, receipt FROM drill_receipts WHERE id = 'drl_a'")
		}, audit.BreakInserted, "drl_forged"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			x := newAuditFixture(t)
			x.lifecycle("evt_1:task")
			x.saveDrill("drl_a", "pass")
			x.saveDrill("drl_b", "fail")
			x.checkpoint()
			if rep := x.verify(); !rep.OK() {
				t.Fatalf("before tampering: %v", rep.Breaks)
			}
			c.tamper(x)
			rep := x.verify()
			if rep.OK() {
				t.Fatal("the tampered receipt verifies")
			}
			b := rep.Breaks[0]
			if len(rep.Breaks) != 1 || b.Kind != c.kind || !strings.Contains(b.Detail, c.says) {
				t.Fatalf("want one %s break saying %q, got %+v", c.kind, c.says, rep.Breaks)
			}
		})
	}
}
