package domain_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestLedger_LogChange: each written change is one log line naming the
// key, the event, the state before and after and the attempt.
func TestLedger_LogChange(t *testing.T) {
	var buf bytes.Buffer
	l := domain.NewLedger(storetest.New(t), testCards())
	l.Log = slog.New(slog.NewJSONHandler(&buf, nil))
	res, err := l.Workflow.Register(context.Background(), wf, domain.Registration{Key: "evt_42:charge", Type: "crm.task.create",
		EventID: "evt_42", Content: json.RawMessage(`{"a":1}`), Claim: &domain.Claim{Worker: "w-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Workflow.Begin(context.Background(), wf, res.Operation.ID, domain.Begin{LeaseToken: res.Claim.Lease.Token}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d log lines for two changes: %s", len(lines), buf.String())
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &last); err != nil {
		t.Fatal(err)
	}
	if last["key"] != "evt_42:charge" || last["event_id"] != "evt_42" || last["state_before"] != "processing" ||
		last["state_after"] != "action_pending" || last["attempt"] != 1.0 {
		t.Fatalf("log line: %s", lines[1])
	}
}
