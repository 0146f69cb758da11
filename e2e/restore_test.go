package e2e

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/opshandoff/handoff/store/storetest"
)

// TestRestore_fromADump: a loaded PostgreSQL database is backed up with
// pg_dump while the server runs, with operations in flight (claimed, and
// begun); the server goes on writing after the backup. The dump restored
// into an empty database then verifies — chains, checkpoints, and the roots
// published before the backup (those published after it are the history the
// backup lacks) — and a server on it finishes what was in flight the usual
// way: the claimed operation's lease lapses back to received, the begun
// one's to unknown_outcome on the desk. No lease outlives the restore.
func TestRestore_fromADump(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("a PostgreSQL backup and restore; set HANDOFF_TEST_POSTGRES to run it")
	}
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	dbURL := databaseURL(t)
	roots := filepath.Join(t.TempDir(), "roots.jsonl")
	s := startServer(t, "HANDOFF_DATABASE_URL="+dbURL, "HANDOFF_AUDIT_CHECKPOINT_INTERVAL=100ms", "HANDOFF_AUDIT_ROOTS_FILE="+roots)
	for _, key := range []string{"evt_1:task", "evt_2:task", "evt_3:task"} {
		driveLifecycle(t, s, key)
	}
	claimed := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_claimed:task", "type": "crm.task.create",
		"content": map[string]any{"title": "claimed"}, "claim": map[string]any{"worker": "w", "lease_seconds": 2}})
	begun := s.do(t, "POST", "/v1/operations", map[string]any{"key": "evt_begun:task", "type": "crm.task.create",
		"content": map[string]any{"title": "begun"}, "claim": map[string]any{"worker": "w", "lease_seconds": 2, "begin": true}})
	if claimed.Status != 201 || begun.Status != 201 || str(begun.Body, "state") != "action_pending" {
		t.Fatalf("in flight: %d %s / %d %s", claimed.Status, claimed.Raw, begun.Status, begun.Raw)
	}
	waitRoots(t, roots, 1)

	dump := filepath.Join(t.TempDir(), "handoff.dump")
	base, schema := pgTarget(t, dbURL)
	if out, err := exec.Command("pg_dump", "--format=custom", "--schema="+schema, "--file="+dump, base).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	before := countLines(t, roots)
	driveLifecycle(t, s, "evt_after_backup:task") // history the backup lacks
	waitRoots(t, roots, before+1)

	// The database is lost with its server; the restore: an empty database
	// (here: the schema dropped), the dump restored into it, verified before
	// any server writes to it.
	if err := syscall.Kill(s.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := http.Get(s.URL + "/readyz"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the server did not stop")
		}
	}
	admin := exec.Command("psql", "--quiet", "--command=DROP SCHEMA "+schema+" CASCADE", base)
	if out, err := admin.CombinedOutput(); err != nil {
		t.Fatalf("dropping the schema: %v\n%s", err, out)
	}
	if out, err := exec.Command("pg_restore", "--exit-on-error", "--dbname="+base, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	out, err := s.handoff(t, "audit", "verify", "--db", "--roots", roots, "--restored")
	if err != nil || !strings.HasPrefix(out, "ok  ") || !strings.Contains(out, "published after the trail's last one") {
		t.Fatalf("verify of the restored database against the published roots: %v\n%s", err, out)
	}
	if out, err := s.handoff(t, "audit", "verify", "--db", "--roots", roots); err == nil {
		t.Fatalf("without --restored the missing history should be reported:\n%s", out)
	}

	r := startServer(t, "HANDOFF_DATABASE_URL="+dbURL, "HANDOFF_AUDIT_ROOTS_FILE="+filepath.Join(t.TempDir(), "after-restore.jsonl"))
	for _, c := range []struct{ id, want string }{{str(claimed.Body, "id"), "received"}, {str(begun.Body, "id"), "unknown_outcome"}} {
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			op := r.do(t, "GET", "/v1/operations/"+c.id, nil)
			if str(op.Body, "state") == c.want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("operation %s after the restore: %s, want %s", c.id, op.Raw, c.want)
			}
		}
	}
	if r := r.do(t, "GET", "/v1/operations?key=evt_after_backup:task", nil); strings.Contains(string(r.Raw), "evt_after_backup") {
		t.Fatalf("the operation written after the backup is in the restored database: %s", r.Raw)
	}
	if out, err := r.handoff(t, "audit", "verify", "--db"); err != nil {
		t.Fatalf("verify after the restored server ran: %v\n%s", err, out)
	}
}

// pgTarget splits a test database URL into the server's URL (without the
// search_path that names the schema, which pg_dump does not take) and the
// schema.
func pgTarget(t *testing.T, dbURL string) (string, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	schema := q.Get("search_path")
	q.Del("search_path")
	u.RawQuery = q.Encode()
	if schema == "" {
		t.Fatalf("no schema in %s", dbURL)
	}
	return u.String(), schema
}

func countLines(t *testing.T, file string) int {
	t.Helper()
	raw, _ := os.ReadFile(file)
	return strings.Count(string(raw), "\n")
}

// waitRoots waits until the roots file has at least n lines.
func waitRoots(t *testing.T, file string, n int) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); countLines(t, file) < n; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("fewer than %d roots published within 15s", n)
		}
	}
}
