package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

func init() {
	testPeople["opal"] = domain.Actor{Kind: domain.ActorPerson, Name: "Opal Operator", Email: "opal@example.com", Subject: "opal",
		Role: domain.RoleOperator}
}

// TestDesk_SearchKeepsHiddenContentHidden: with content_visible_to:
// operator, a search on any desk surface finds an operation by its content
// only for those who may read that content — never for a viewer or an
// auditor, who could otherwise confirm a hidden birth date one guess at a
// time — while its key finds it for everyone on every surface.
func TestDesk_SearchKeepsHiddenContentHidden(t *testing.T) {
	d := newDesk(t)
	crm := d.ledger.Cards["crm.task.create"]
	crm.ContentVisibleTo = domain.RoleOperator
	d.ledger.Cards[crm.Name] = crm
	ctx := context.Background()
	res, err := d.ledger.Workflow.Register(ctx, testWorkflow, domain.Registration{Key: "evt_7:patient", Type: crm.Name, EventID: "evt_7",
		Content: json.RawMessage(`{"born":"1984-03-02"}`)})
	if err != nil {
		t.Fatal(err)
	}
	op := res.Operation
	cl, err := d.ledger.Workflow.Claim(ctx, testWorkflow, op.ID, domain.Claim{Worker: "w1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.ledger.Workflow.Settle(ctx, testWorkflow, op.ID, domain.Settle{LeaseToken: cl.Lease.Token, Outcome: domain.OutcomeFailedTerminal,
		Error: &domain.ErrorInfo{Class: domain.ClassValidation, Message: "no such owner"}}); err != nil {
		t.Fatal(err)
	}

	d.indexSearch()

	// Each surface lists the IDs it finds for a search text.
	rows := func(a answer, testid string) map[string]bool {
		out := map[string]bool{}
		for _, n := range a.all(testid) {
			out[attr(n, "data-id")] = true
		}
		return out
	}
	surfaces := []struct {
		name string
		// content: whether the surface searches content at all.
		content bool
		find    func(who, text string) map[string]bool
	}{
		{"operations page", true, func(who, text string) map[string]bool {
			return rows(d.get(who, "/desk/operations?q="+url.QueryEscape(text)).want(http.StatusOK), "queue-row")
		}},
		{"operations page, htmx", true, func(who, text string) map[string]bool {
			return rows(d.get(who, "/desk/operations?q="+url.QueryEscape(text), "HX-Request", "true").want(http.StatusOK), "queue-row")
		}},
		{"operations page's total", true, func(who, text string) map[string]bool {
			a := d.get(who, "/desk/operations?q="+url.QueryEscape(text)).want(http.StatusOK)
			if attr(a.one("list-total"), "data-total") == "1" { // the total counts what is listed, no more
				return map[string]bool{op.ID: true}
			}
			return map[string]bool{}
		}},
		{"queue", false, func(who, text string) map[string]bool {
			return rows(d.get(who, "/desk/queue?q="+url.QueryEscape(text)).want(http.StatusOK), "queue-row")
		}},
		{"batch preview of a filter", false, func(who, text string) map[string]bool {
			a := d.post(who, "/desk/batch/preview", url.Values{"all": {"1"}, "q": {text}, "decision": {"cancel"}, "reason": {"r"}})
			switch a.status {
			case http.StatusForbidden:
				return map[string]bool{"forbidden": true}
			case http.StatusUnprocessableEntity: // nothing matched
				return map[string]bool{}
			}
			return rows(a.want(http.StatusOK), "batch-row")
		}},
	}
	for _, who := range []string{"vic", "aud", "opal", "ada", "adm"} {
		mayRead := crm.MayReadContent(testPeople[who])
		for _, s := range surfaces {
			t.Run(testPeople[who].Role.String()+"/"+s.name, func(t *testing.T) {
				byKey := s.find(who, "evt_7:pat")
				if byKey["forbidden"] {
					if testPeople[who].Role.AtLeast(domain.RoleOperator) {
						t.Fatal("refused to someone who may act")
					}
					return
				}
				if !byKey[op.ID] {
					t.Fatalf("the key does not find it: %v", byKey)
				}
				for _, text := range []string{"1984-03-02", "1984-03", `"born"`} {
					if got, want := s.find(who, text)[op.ID], mayRead && s.content; got != want {
						t.Errorf("%q finds it: %v, want %v", text, got, want)
					}
				}
			})
		}
	}
}
