package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAuditTrail_rootsPublishedAndVerified: with HANDOFF_AUDIT_ROOTS_FILE
// set, the server appends each checkpoint's root to the file, and `handoff
// audit verify --db --roots FILE` checks the database against them; a roots
// file that publishes another root for a checkpoint fails it.
func TestAuditTrail_rootsPublishedAndVerified(t *testing.T) {
	roots := filepath.Join(t.TempDir(), "roots.jsonl")
	s := startServer(t, "HANDOFF_AUDIT_CHECKPOINT_INTERVAL=100ms", "HANDOFF_AUDIT_ROOTS_FILE="+roots)
	driveLifecycle(t, s, "evt_roots:task")
	var published string
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		raw, _ := os.ReadFile(roots)
		if published = string(raw); strings.Contains(published, `"checkpoint":`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no root published within 15s")
		}
	}
	if out, err := s.handoff(t, "audit", "verify", "--db", "--roots", roots); err != nil || !strings.HasPrefix(out, "ok  ") {
		t.Fatalf("verify --db --roots: %v\n%s", err, out)
	}
	first := strings.SplitN(published, "\n", 2)[0]
	i := strings.Index(first, `"root":"`) + len(`"root":"`)
	forged := first[:i] + strings.Repeat("0", 64) + first[i+64:]
	other := filepath.Join(t.TempDir(), "other.jsonl")
	if err := os.WriteFile(other, []byte(forged+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := s.handoff(t, "audit", "verify", "--db", "--roots", other); err == nil || !strings.Contains(out, "published outside the database") {
		t.Fatalf("verify against another root should fail: %v\n%s", err, out)
	}
}
