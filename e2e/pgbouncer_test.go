package e2e

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

const pgbouncerBinary = "/usr/sbin/pgbouncer"

// TestPgBouncer_TransactionMode runs the lifecycle and concurrency tests,
// and checks the probes, with every server behind PgBouncer in transaction
// mode, configured as docs/guides/pgbouncer.md says: pgx's
// describe cache instead of named prepared statements, and migrations run
// on a direct connection before the replicas start.
func TestPgBouncer_TransactionMode(t *testing.T) {
	if !storetest.Postgres() {
		t.Skip("needs PostgreSQL: set " + storetest.EnvPostgres)
	}
	if _, err := os.Stat(pgbouncerBinary); err != nil {
		t.Skip("needs pgbouncer (apt-get install pgbouncer; .ci/run installs it)")
	}
	direct, err := url.Parse(os.Getenv(storetest.EnvPostgres))
	if err != nil {
		t.Fatal(err)
	}
	bouncer := startPgBouncer(t, direct)

	admin, err := sql.Open("pgx", direct.String())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	databaseURL = func(t testing.TB) string {
		t.Helper()
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		name := "handoff_pgb_" + hex.EncodeToString(b)
		if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _, _ = admin.Exec("DROP DATABASE " + name + " WITH (FORCE)") })
		// `handoff migrate` on a direct connection: the migration lock is a
		// session lock, which transaction pooling cannot hold.
		d := *direct
		d.Path = "/" + name
		s, err := store.Open(context.Background(), d.String())
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable&default_query_exec_mode=cache_describe", direct.User.Username(), bouncer, name)
	}
	defer func() { databaseURL = storetest.URL }()

	for name, test := range map[string]func(*testing.T){
		"ClientDo":                                TestClientDo,
		"ConcurrentRegistrationsOfOneKey":         TestConcurrentRegistrationsOfOneKey,
		"ConcurrentClaimsHaveOneWinner":           TestConcurrentClaimsHaveOneWinner,
		"ReclaimFencesTheOldToken":                TestReclaimFencesTheOldToken,
		"LeaseExpiringAfterBeginIsUnknownForever": TestLeaseExpiringAfterBeginIsUnknownForever,
		"PullingWorkersNeverShareAnOperation":     TestPullingWorkersNeverShareAnOperation,
	} {
		t.Run(name, test)
	}
	cons, err := sql.Open("pgx", fmt.Sprintf("postgres://%s@%s/pgbouncer?sslmode=disable&default_query_exec_mode=simple_protocol",
		direct.User.Username(), bouncer))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()

	// The probes: /readyz fails while the database cannot be reached or a
	// migration is pending, and recovers; /healthz is liveness only.
	t.Run("Probes", func(t *testing.T) {
		s := startServer(t)
		u, _ := url.Parse(envOf(s, "HANDOFF_DATABASE_URL"))
		name := strings.TrimPrefix(u.Path, "/")
		probe := func(path string) int {
			r := s.call(t, "", "GET", path, nil)
			return r.Status
		}
		waitFor := func(what string, want int) {
			t.Helper()
			for deadline := time.Now().Add(30 * time.Second); probe("/readyz") != want; time.Sleep(100 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("/readyz did not answer %d %s", want, what)
				}
			}
			if got := probe("/healthz"); got != 200 {
				t.Fatalf("/healthz answered %d %s", got, what)
			}
		}
		waitFor("at the start", 200)
		for _, cmd := range []string{"DISABLE " + name, "KILL " + name} {
			if _, err := cons.Exec(cmd); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
		}
		waitFor("while the database cannot be reached", 503)
		for _, cmd := range []string{"RESUME " + name, "ENABLE " + name} {
			if _, err := cons.Exec(cmd); err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
		}
		waitFor("once the database is back", 200)

		d := *direct
		d.Path = "/" + name
		db, err := sql.Open("pgx", d.String())
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var latest int64
		if err := db.QueryRow("DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version) RETURNING version_id").Scan(&latest); err != nil {
			t.Fatal(err)
		}
		waitFor("with a migration pending", 503)
		if _, err := db.Exec("INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)", latest); err != nil {
			t.Fatal(err)
		}
		waitFor("once migrated", 200)
	})

	// Everything went through PgBouncer, in transaction mode.
	var mode string
	rows, err := cons.Query("SHOW CONFIG")
	if err != nil {
		t.Fatalf("PgBouncer's console: %v", err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(vals[0]) == "pool_mode" {
			mode = fmt.Sprint(vals[1])
		}
	}
	if mode != "transaction" {
		t.Fatalf("PgBouncer's pool_mode is %q", mode)
	}
}

// startPgBouncer runs PgBouncer in transaction mode on a free loopback port
// in front of the PostgreSQL at direct, until the test ends.
func startPgBouncer(t *testing.T, direct *url.URL) string {
	t.Helper()
	dir := t.TempDir()
	addr := freeAddr(t, "127.0.0.1")
	_, port, _ := net.SplitHostPort(addr)
	user := direct.User.Username()
	host, pgPort := direct.Hostname(), direct.Port()
	if pgPort == "" {
		pgPort = "5432"
	}
	conf := fmt.Sprintf(`[databases]
* = host=%s port=%s

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %s
unix_socket_dir =
auth_type = trust
auth_file = %s/users.txt
admin_users = %s
pool_mode = transaction
default_pool_size = 8
max_client_conn = 1000
server_reset_query =
ignore_startup_parameters = extra_float_digits
`, host, pgPort, port, dir, user)
	if err := os.WriteFile(filepath.Join(dir, "pgbouncer.ini"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "users.txt"), []byte(fmt.Sprintf("%q \"\"\n", user)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{filepath.Join(dir, "pgbouncer.ini")}
	if os.Geteuid() == 0 {
		args = append([]string{"-u", "postgres"}, args...) // PgBouncer refuses to run as root
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, pgbouncerBinary, args...)
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("pgbouncer log:\n%s", logs.String())
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) || strings.Contains(logs.String(), "FATAL") {
			t.Fatalf("pgbouncer did not start: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
