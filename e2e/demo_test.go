package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDemo_FillsTheDesk runs the compose demo profile's sample workflow
// against a server with the bundled cards: its simulated provider leaves
// operations for people to decide, beside ones that completed.
func TestDemo_FillsTheDesk(t *testing.T) {
	demo := filepath.Join(t.TempDir(), "handoff-demo")
	build := exec.Command("go", "build", "-trimpath", "-o", demo, "../cmd/handoff-demo")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	db := databaseURL(t)
	s := launch(t, map[string]string{"HANDOFF_DATABASE_URL": db, "HANDOFF_ADDR": freeAddr(t, "127.0.0.1")})
	run := exec.Command(demo, "-url", s.URL, "-every", "0s", "-count", "40", "-seed", "7")
	run.Env = append(os.Environ(), "HANDOFF_DATABASE_URL="+db)
	if out, err := run.CombinedOutput(); err != nil {
		t.Fatalf("handoff-demo: %v\n%s", err, out)
	}
	reader := s.createToken(t, "demo", "reader")
	count := func(state string) int {
		r := s.call(t, reader, "GET", "/v1/operations?limit=200&state="+state, nil)
		items, _ := r.Body["items"].([]any)
		if r.Status != 200 {
			t.Fatalf("list %s: %d %s", state, r.Status, r.Raw)
		}
		return len(items)
	}
	unknown, terminal, completed := count("unknown_outcome"), count("failed_terminal"), count("completed")
	if unknown == 0 || completed == 0 {
		t.Fatalf("after 40 demo operations: %d unknown_outcome, %d failed_terminal, %d completed; want some to decide and some done",
			unknown, terminal, completed)
	}
	t.Logf("%d unknown_outcome, %d failed_terminal, %d completed", unknown, terminal, completed)
}
