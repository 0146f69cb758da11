package notify_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/notify"
)

// TestBody_incidentNotice: an incident's notice carries the incident — its
// page, its counts and "12 more items" — and Slack's headline says it.
func TestBody_incidentNotice(t *testing.T) {
	n := note("https://hooks.example.com/x", domain.FormatStandard)
	n.Type = domain.NotifyIncidentGrew
	n.Summary.DeskPath = domain.IncidentPath("inc_1")
	n.Summary.Incident = &domain.NotifiedIncident{ID: "inc_1", Status: "acknowledged", OpenItems: 18, TotalItems: 20, NewItems: 12,
		DeskPath: domain.IncidentPath("inc_1")}
	body, err := notify.Body(n, "https://handoff.example.com")
	if err != nil {
		t.Fatal(err)
	}
	var m notify.Message
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	in := m.Data.Incident
	if m.Type != "incident.grew" || in == nil || in.ID != "inc_1" || in.NewItems != 12 || in.Headline != "12 more items, 20 items in all" ||
		m.Data.DeskURL != "https://handoff.example.com/desk/incidents/inc_1" {
		t.Fatalf("body: %s", body)
	}
	n.Destination.Format = domain.FormatSlack
	body, err = notify.Body(n, "https://handoff.example.com")
	if err != nil || !strings.Contains(string(body), "Incident acme-crm · crm.task.create timeout:lease_expired 12 more items") {
		t.Fatalf("slack: %s %v", body, err)
	}
}

// TestGrowthWords: the headline of each kind of notice.
func TestGrowthWords(t *testing.T) {
	for _, c := range []struct {
		in   domain.NotifiedIncident
		want string
	}{
		{domain.NotifiedIncident{OpenItems: 1, TotalItems: 1, NewItems: 1}, "opened: 1 item"},
		{domain.NotifiedIncident{OpenItems: 2, TotalItems: 3, NewItems: 1}, "1 more item, 3 items in all"},
		{domain.NotifiedIncident{OpenItems: 1, TotalItems: 9, NewItems: 1, Reopened: true}, "reopened by 1 new item; 1 open"},
	} {
		if got := domain.GrowthWords(c.in); got != c.want {
			t.Errorf("%+v: %q, want %q", c.in, got, c.want)
		}
	}
}
