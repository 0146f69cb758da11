package domain_test

import (
	"encoding/json"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

func TestCard_Summary(t *testing.T) {
	c := testCard()
	c.Summary = []string{"/amount", "/customer/name", "/a~1b", "/none"}
	if errs := c.Validate(); len(errs) != 0 {
		t.Fatalf("valid summary refused: %v", errs)
	}
	op := domain.Operation{Type: c.Name, Content: json.RawMessage(`{"amount":1200,"customer":{"name":"Omar"},"a/b":"x"}`)}
	got := c.SummaryOf(op, alice)
	if len(got) != 3 || got[0] != (domain.SummaryField{Name: "amount", Value: "1200"}) || got[1].Value != "Omar" || got[2].Name != "a/b" {
		t.Fatalf("summary: %+v", got)
	}
	c.ContentVisibleTo = domain.RoleAdmin
	if got := c.SummaryOf(op, alice); got != nil {
		t.Fatalf("an operator reads a summary the card hides from them: %+v", got)
	}
	for _, bad := range [][]string{{"amount"}, {""}, {"/a~2"}, {"/a", "/b", "/c", "/d", "/e"}} {
		c.Summary = bad
		if errs := c.Validate(); len(errs) == 0 {
			t.Errorf("summary %q accepted", bad)
		}
	}
}
