package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestDesk_CountsKeepHiddenContentHidden: the totals that run a query of
// their own — the Operations page's total over several pages, the queue's
// "select all N matching" and a bulk decision's "the filter matches N" —
// count an operation by its content only for those who may read it. A
// type whose content is hidden from viewers and operators has three
// operations whose content matches the search; they must not show in a
// count the search makes for a viewer or an operator, or a count would
// confirm hidden content one guess at a time.
func TestDesk_CountsKeepHiddenContentHidden(t *testing.T) {
	d := newDesk(t)
	hidden := d.ledger.Cards["crm.task.create"]
	hidden.ContentVisibleTo = domain.RoleApprover
	d.ledger.Cards[hidden.Name] = hidden
	open := hidden
	open.Name, open.ContentVisibleTo = "crm.note.create", domain.Role{}
	d.ledger.Cards[open.Name] = open
	ctx := context.Background()
	failed := func(typ, key, content string) {
		t.Helper()
		res, err := d.ledger.Workflow.Register(ctx, testWorkflow, domain.Registration{Key: key, Type: typ, Content: json.RawMessage(content)})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := d.ledger.Workflow.Claim(ctx, testWorkflow, res.Operation.ID, domain.Claim{Worker: "w1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.ledger.Workflow.Settle(ctx, testWorkflow, res.Operation.ID, domain.Settle{LeaseToken: cl.Lease.Token,
			Outcome: domain.OutcomeFailedTerminal, Error: &domain.ErrorInfo{Class: domain.ClassValidation, Message: "no such owner"}}); err != nil {
			t.Fatal(err)
		}
	}
	const listed = queuePageSize + 2 // more than one page: the total is a query of its own
	for i := range listed {
		failed(open.Name, fmt.Sprintf("walrus-%d", i), fmt.Sprintf(`{"n":%d}`, i))
	}
	for i := range 3 {
		failed(hidden.Name, fmt.Sprintf("h-%d", i), fmt.Sprintf(`{"secret":"walrus","n":%d}`, i))
	}

	d.indexSearch()
	total := func(who, path string) (string, string) {
		a := d.get(who, path+"?q=walrus").want(http.StatusOK)
		sel := ""
		if n := a.all("select-all-count"); len(n) > 0 {
			sel = text(n[0])
		}
		return attr(a.one("list-total"), "data-total"), sel
	}
	for _, who := range []string{"vic", "opal", "ada"} {
		want := listed
		if hidden.MayReadContent(testPeople[who]) {
			want += 3 // they may read it: the search finds it by its content
		}
		if got, _ := total(who, "/desk/operations"); got != fmt.Sprint(want) {
			t.Errorf("%s: the Operations page's total is %s, want %d", who, got, want)
		}
		// The queue searches no content: its total and its "select all"
		// count what the keys match, for everyone.
		got, sel := total(who, "/desk/queue")
		if got != fmt.Sprint(listed) {
			t.Errorf("%s: the queue's total is %s, want %d", who, got, listed)
		}
		if testPeople[who].Role.AtLeast(domain.RoleOperator) && sel != fmt.Sprint(listed) {
			t.Errorf("%s: select all %q matching, want %d", who, sel, listed)
		}
		if !testPeople[who].Role.AtLeast(domain.RoleOperator) {
			continue
		}
		a := d.post(who, "/desk/batch/preview", url.Values{"all": {"1"}, "q": {"walrus"}, "decision": {"cancel"}, "reason": {"r"}}).want(http.StatusOK)
		if m := text(a.one("batch-matching")); !strings.Contains(m, fmt.Sprintf("matches %d items", listed)) {
			t.Errorf("%s: a bulk decision's count: %q, want %d", who, m, listed)
		}
	}
}
