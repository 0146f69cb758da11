package notify_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/notify"
)

// TestBody_wireFormat pins the webhook body byte for byte, in both
// formats: receivers parse it, so a renamed member or a changed omission
// breaks them even when every test of ours still reads it back.
func TestBody_wireFormat(t *testing.T) {
	for format, want := range map[string]string{
		domain.FormatStandard: `{"type":"operation.handed_off","timestamp":"2023-11-14T22:13:20Z","data":{"id":"op_1","key":"evt_1:task","type":"crm.task.create","namespace":"shop","state":"unknown_outcome","reason":"lease_expired","last_error":{"class":"timeout","code":"lease_expired","message":"gone"},"attempts":2,"provider":"acme-crm","provider_key":"pk","age_seconds":0,"assignee":"","desk_path":"/desk/operations/op_1","desk_url":"https://handoff.example.com/desk/operations/op_1"}}`,
		domain.FormatSlack:    "{\"blocks\":[{\"fields\":[{\"text\":\"*State:* unknown_outcome\",\"type\":\"mrkdwn\"},{\"text\":\"*Namespace:* shop\",\"type\":\"mrkdwn\"},{\"text\":\"*Provider:* acme-crm\",\"type\":\"mrkdwn\"},{\"text\":\"*Attempts:* 2\",\"type\":\"mrkdwn\"}],\"text\":{\"text\":\"crm.task.create `evt_1:task` handed to the desk\",\"type\":\"mrkdwn\"},\"type\":\"section\"},{\"text\":{\"text\":\"*Reason:* lease_expired — gone\",\"type\":\"mrkdwn\"},\"type\":\"section\"},{\"elements\":[{\"text\":{\"text\":\"Open in the desk\",\"type\":\"plain_text\"},\"type\":\"button\",\"url\":\"https://handoff.example.com/desk/operations/op_1\"}],\"type\":\"actions\"}],\"text\":\"crm.task.create `evt_1:task` handed to the desk\"}",
	} {
		body, err := notify.Body(note("https://hooks.example.com/x", format), "https://handoff.example.com/")
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != want {
			t.Errorf("%s body:\n got %s\nwant %s", format, body, want)
		}
	}
}

// TestBody_refusesAnUnreadableSummary: a notification whose summary the
// store could not read back is never sent with an empty body.
func TestBody_refusesAnUnreadableSummary(t *testing.T) {
	n := note("https://hooks.example.com/x", domain.FormatStandard)
	n.Unreadable = errors.New("invalid character 'o' in literal null")
	if body, err := notify.Body(n, ""); err == nil {
		t.Fatalf("rendered %s", body)
	}
}

// TestBody_carriesTheDeskEntry: a receiver can tell how long the operation
// has waited on a person from the body alone.
func TestBody_carriesTheDeskEntry(t *testing.T) {
	n := note("https://hooks.example.com/x", domain.FormatStandard)
	at := time.Date(2023, 11, 14, 22, 10, 0, 0, time.UTC)
	n.Summary.EnteredDeskAt = &at
	body, err := notify.Body(n, "")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(body), `"age_seconds":0,"entered_desk_at":"2023-11-14T22:10:00Z","assignee":""`) {
		t.Fatalf("body: %s", body)
	}
}
