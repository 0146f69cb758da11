package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// TestDesk_ContentVisibleTo: with content_visible_to: operator, a viewer's
// operation and approvals pages show the hash and the size, never the
// content, and the snapshot download is refused; an operator sees it all.
func TestDesk_ContentVisibleTo(t *testing.T) {
	d := newDesk(t)
	coupon := d.ledger.Cards["coupon.issue"]
	coupon.ContentVisibleTo = domain.RoleOperator
	d.ledger.Cards[coupon.Name] = coupon
	content := `{"email":"ada@example.com","amount":5}`
	res, err := d.ledger.Workflow.Register(context.Background(), testWorkflow, domain.Registration{Key: "evt_9:coupon", Type: "coupon.issue",
		Content: json.RawMessage(content)})
	if err != nil {
		t.Fatal(err)
	}
	op := res.Operation
	size := strconv.Itoa(len(`{"amount":5,"email":"ada@example.com"}`))

	for _, page := range []string{"/desk/operations/" + op.ID, "/desk/approvals"} {
		v := d.get("vic", page).want(http.StatusOK)
		if strings.Contains(v.body, "ada@example.com") {
			t.Fatalf("viewer reads the content on %s", page)
		}
		if got := v.text("content-hidden"); !strings.Contains(got, size+" bytes") || !strings.Contains(got, "operators and above") {
			t.Fatalf("%s: hidden notice %q", page, got)
		}
		if !strings.Contains(v.body, op.ContentSHA256) {
			t.Fatalf("%s: the hash is not shown", page)
		}
		if a := d.get("ada", page).want(http.StatusOK); !strings.Contains(a.body, "ada@example.com") || len(a.all("content-hidden")) != 0 {
			t.Fatalf("%s: the operator does not see the content", page)
		}
	}
	d.get("vic", "/desk/operations/"+op.ID+"/content/1.json").want(http.StatusForbidden)
	if got := d.get("ada", "/desk/operations/"+op.ID+"/content/1.json").want(http.StatusOK); !strings.Contains(got.body, "ada@example.com") {
		t.Fatalf("operator download: %s", got.body)
	}
}
