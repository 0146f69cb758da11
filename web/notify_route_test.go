package web

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
)

// Each destination's row on the Notifications page says which kinds of
// notification it takes: a Slack channel its default (the incidents,
// escalations, resolutions and approval requests), a standard one every
// kind. The Slack channel was not sent the item's hand-off.
func TestDesk_NotificationsShowKinds(t *testing.T) {
	cards := testCards()
	crm := cards["crm.task.create"]
	crm.Notify = []domain.Destination{{URL: "https://hooks.slack.com/services/T/B/x", Format: domain.FormatSlack},
		{URL: "https://ops.example.com/hook", Format: domain.FormatStandard, Unsigned: true}}
	cards[crm.Name] = crm
	d := newDeskWith(t, cards)
	op := d.intoDesk("evt_1:crm_task", true)

	recs, err := d.store.Notifications(context.Background(), op.ID)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.Destination.Format+" "+r.Type)
	}
	if strings.Join(got, ",") != "standard operation.handed_off,slack incident.opened,standard incident.opened" &&
		strings.Join(got, ",") != "standard operation.handed_off,standard incident.opened,slack incident.opened" {
		t.Fatalf("notifications: %v", got)
	}
	p := d.get("adm", "/desk/notifications").want(http.StatusOK)
	kinds := map[string]string{}
	for _, row := range p.all("destination-row") {
		kinds[strings.Fields(text(row))[0]] = text(row)
	}
	if !strings.Contains(kinds["https://hooks.slack.com/services/T/B/x"], "incident.*, operation.escalated, operation.resolved, operation.approval_requested") ||
		!strings.Contains(kinds["https://ops.example.com/hook"], "every kind") {
		t.Fatalf("the kinds are not shown: %v", kinds)
	}
}
