package store_test

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestAudit_appendOnly: the audit table refuses UPDATE, DELETE and (on
// PostgreSQL) TRUNCATE, even from the table's owner, while INSERT works.
func TestAudit_appendOnly(t *testing.T) {
	x := newAuditFixture(t)
	op := x.lifecycle("evt_1:task")
	stmts := []string{
		"UPDATE audit_events SET reason = 'x' WHERE stream = '" + op + "'",
		"DELETE FROM audit_events WHERE stream = '" + op + "'",
	}
	if storetest.Postgres() {
		stmts = append(stmts, "TRUNCATE audit_events")
	}
	for _, q := range stmts {
		err := store.TryRaw(x.s, q)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want the append-only refusal", q, err)
		}
	}
	if n := len(x.events(op)); n != 4 {
		t.Fatalf("%d events left, want 4", n)
	}
	if rep := x.verify(); !rep.OK() {
		t.Fatalf("after refused tampering: %v", rep.Breaks)
	}
}

// TestAudit_restrictedRole runs the server's store as a role with the
// grants the PostgreSQL migration documents: it writes the ledger and the
// trail, purges through the SECURITY DEFINER function, and cannot UPDATE or
// DELETE an audit row even with the trigger out of the way.
func TestAudit_restrictedRole(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("roles are PostgreSQL's")
	}
	ownerURL := storetest.URL(t)
	owner, err := store.Open(context.Background(), ownerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	u, _ := url.Parse(ownerURL)
	schema := u.Query().Get("search_path")
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	role := "handoff_app_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", os.Getenv(storetest.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE ROLE " + role + " LOGIN PASSWORD 'app'",
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema + " TO " + role,
		"REVOKE UPDATE, DELETE, TRUNCATE ON " + schema + ".audit_events, " + schema + ".audit_checkpoints FROM " + role,
		"GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA " + schema + " TO " + role,
		"GRANT EXECUTE ON FUNCTION " + schema + ".handoff_purge_audit_stream(text) TO " + role,
	} {
		if _, err := admin.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() { // after the stores below are closed
		_, _ = admin.Exec("DROP OWNED BY " + role)
		if _, err := admin.Exec("DROP ROLE " + role); err != nil {
			t.Errorf("dropping the test role: %v", err)
		}
		admin.Close()
	})
	u.User = url.UserPassword(role, "app")
	app, err := store.Open(context.Background(), u.String())
	if err != nil {
		t.Fatalf("opening as %s: %v", role, err)
	}
	defer app.Close()

	x := &auditFixture{t: t, s: app, l: domain.NewLedger(app, testCards())}
	x.trail = trailOf(x.l)
	op := x.lifecycle("evt_1:task")
	x.checkpoint()
	store.ExecRaw(t, owner, "ALTER TABLE audit_events DISABLE TRIGGER audit_events_append_only")
	for _, q := range []string{"UPDATE audit_events SET reason = 'x'", "DELETE FROM audit_events", "TRUNCATE audit_events"} {
		if err := store.TryRaw(app, q); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s as %s: %v, want permission denied", q, role, err)
		}
	}
	store.ExecRaw(t, owner, "ALTER TABLE audit_events ENABLE TRIGGER audit_events_append_only")
	if err := store.TryRaw(app, "SELECT handoff_purge_audit_stream(?)", op); err == nil {
		t.Error("the purge function ran without a tombstone")
	}
	x.trail.Now = func() time.Time { return time.Now().Add(48 * time.Hour) }
	if n, err := x.trail.Purge(context.Background(), 24*time.Hour, 10); err != nil || n != 1 {
		t.Fatalf("purge as %s: %d %v", role, n, err)
	}
	if rep := x.verify(); !rep.OK() {
		t.Fatalf("after the purge: %v", rep.Breaks)
	}
}
