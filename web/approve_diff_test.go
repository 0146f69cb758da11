package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// On the operation's page, the changes to approve are above the Approve
// button: a person reads what they approve before they press it.
func TestDesk_ApproveDiffAboveTheButton(t *testing.T) {
	d := newDesk(t)
	failed := d.intoDesk("evt_2:crm_task", false)
	rev := url.Values{"expected_version": {version(failed)}, "reason": {"owner u_9 left"},
		"content": {`{"owner":"u_10","title":"Follow up"}`}}
	d.post("ada", "/desk/operations/"+failed.ID+"/revisions", rev).want(http.StatusSeeOther)

	p := d.get("bob", "/desk/operations/"+failed.ID).want(http.StatusOK)
	diff := p.text("approve-diff")
	if !strings.Contains(diff, `- "owner": "u_9",`) || !strings.Contains(diff, `+ "owner": "u_10",`) {
		t.Fatalf("the diff beside Approve: %q", diff)
	}
	// In document order the diff comes before the button.
	var order []string
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch attr(n, "data-testid") {
			case "approve-diff", "submit-approve":
				order = append(order, attr(n, "data-testid"))
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(p.doc)
	if len(order) < 2 || order[0] != "approve-diff" {
		t.Fatalf("order on the page: %v", order)
	}
}
