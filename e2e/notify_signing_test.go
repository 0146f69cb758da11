package e2e

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServe_RefusesUnsignedNotifications: `handoff serve` with
// HANDOFF_NOTIFY_URL and no HANDOFF_NOTIFY_SECRET does not start, and says
// which operation type and which variable; with a malformed secret neither.
func TestServe_RefusesUnsignedNotifications(t *testing.T) {
	bin := handoffBinary(t)
	for name, secret := range map[string]string{"no secret": "", "malformed secret": "whsec_not base64!"} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, "serve")
			cmd.Env = append(os.Environ(), "HANDOFF_DATABASE_URL="+databaseURL(t), "HANDOFF_ADDR=127.0.0.1:0",
				"HANDOFF_CARDS=testdata/cards.yaml", "HANDOFF_NOTIFY_URL=https://hooks.example.com/handoff",
				"HANDOFF_NOTIFY_SECRET="+secret)
			out, err := cmd.CombinedOutput()
			if err == nil || ctx.Err() != nil {
				t.Fatalf("serve started (%v):\n%s", err, out)
			}
			for _, want := range []string{`"crm.task.create"`, "HANDOFF_NOTIFY_SECRET"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("the refusal does not name %s:\n%s", want, out)
				}
			}
		})
	}
}
