package e2e

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/auth/oidctest"
	"github.com/opshandoff/handoff/store/storetest"
)

// TestFaults_BatchKilledMidway: a person's 1,000-item batch (POST
// /v1/batches, retry of failed_terminal items) with the server killed by
// SIGKILL while it runs, at three points: afterwards every item is either
// applied, with exactly one audit event of the batch, or untouched, with
// none; and the audit chain verifies.
func TestFaults_BatchKilledMidway(t *testing.T) {
	needPostgres(t)
	idp := oidctest.Start(t)
	dbURL := storetest.URL(t)
	env := append(baseEnv(dbURL), "HANDOFF_OIDC_ISSUER="+idp.Issuer(), "HANDOFF_OIDC_CLIENT_ID="+idp.ClientID,
		"HANDOFF_OIDC_CLIENT_SECRET="+idp.ClientSecret, "HANDOFF_ROLE_MAP=ops=operator")
	p := launchProc(t, env)
	if err := p.ready(); err != nil {
		t.Fatal(err)
	}
	out, err := cli(t, env, "token", "create", "--namespace", "campaigns", "--name", "batch")
	if err != nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	token := lines[len(lines)-1]
	person := idp.IDToken(t, oidctest.Person{Subject: "u-ann", Email: "ann@example.com", Groups: []string{"ops"}})
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	const n = 1000
	for round, after := range []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, 1200 * time.Millisecond} {
		s := &server{URL: p.URL, Token: token}
		items := make([]map[string]any, n)
		parallel(8, func(w int) {
			for i := w; i < n; i += 8 {
				items[i] = failedTerminal(t, s, fmt.Sprintf("b%d-%d", round, i))
			}
		})
		if t.Failed() {
			t.FailNow()
		}
		answered := make(chan int, 1)
		go func() {
			r, err := postJSON(&server{URL: p.URL, Token: person}, "/v1/batches", map[string]any{"operations": items,
				"decision": map[string]any{"type": "resolve", "action": "retry"}, "reason": "the provider is back"})
			if err != nil {
				answered <- -1
				return
			}
			answered <- int(num(r, "applied"))
		}()
		time.Sleep(after)
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-p.exited
		acked := <-answered

		var applied, untouched, neither int
		if err := db.QueryRow(`SELECT
			count(*) FILTER (WHERE o.state = 'received' AND e.n = 1),
			count(*) FILTER (WHERE o.state = 'failed_terminal' AND e.n = 0),
			count(*) FILTER (WHERE NOT ((o.state = 'received' AND e.n = 1) OR (o.state = 'failed_terminal' AND e.n = 0)))
			FROM operations o CROSS JOIN LATERAL (SELECT count(*) AS n FROM audit_events a
				WHERE a.operation_id = o.id AND a.action = 'resolved' AND a.detail LIKE '%batch_id%') e
			WHERE o.key LIKE $1`, fmt.Sprintf("b%d-%%", round)).Scan(&applied, &untouched, &neither); err != nil {
			t.Fatal(err)
		}
		said := "no answer came"
		if acked >= 0 {
			said = fmt.Sprintf("the answer said %d applied", acked)
		}
		t.Logf("batch %d killed after %v: %d items applied with one event, %d untouched, %d neither (%s)",
			round+1, after, applied, untouched, neither, said)
		if neither != 0 || applied+untouched != n {
			t.Errorf("batch %d: %d of %d items are neither applied once nor untouched", round+1, neither, n)
		}
		if acked > 0 && applied < acked {
			t.Errorf("batch %d answered %d applied, but only %d are", round+1, acked, applied)
		}
		if out, err := cli(t, env, "audit", "verify", "--db"); err != nil {
			t.Fatalf("audit verify --db after batch %d was killed: %v\n%s", round+1, err, out)
		}
		p = launchProc(t, env)
		if err := p.ready(); err != nil {
			t.Fatal(err)
		}
	}
}

// failedTerminal registers key, claims it and settles it failed_terminal,
// and returns it as a batch item.
func failedTerminal(t *testing.T, s *server, key string) map[string]any {
	reg := s.do(t, "POST", "/v1/operations", register(key, true))
	id := str(reg.Body, "id")
	r := s.do(t, "POST", "/v1/operations/"+id+"/settle", map[string]any{"lease_token": num(reg.Body, "claim", "lease", "token"),
		"outcome": "failed_terminal", "error": map[string]any{"class": "validation", "message": "bad owner"}})
	if r.Status != 200 || str(r.Body, "state") != "failed_terminal" {
		t.Errorf("settle %s: %d %s", key, r.Status, r.Raw)
	}
	return map[string]any{"id": id, "expected_version": num(r.Body, "version")}
}
