package store_test

import (
	"context"
	"database/sql"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// BenchmarkAuditPage reads one page of the audit trail through ListAudit,
// as the desk's audit page and GET /v1/audit do, for each filter they
// offer, over a trail shaped like production's: mostly the lifecycle's
// machine transitions, 3% people's decisions, 1% the system's outcomes,
// five namespaces of very different sizes, one day long. It reports each
// filter's p95, on the index set of migration 00016 and on the one before
// it, interleaved, over the same rows (HANDOFF_BENCH_AUDIT_SCHEMAS sets the
// sequence, default new,old,new,old):
//
//	HANDOFF_TEST_POSTGRES=postgres://… HANDOFF_BENCH_AUDIT_EVENTS=1000000 \
//	  go test -run XXX -bench AuditPage -benchtime 30x ./store/
//
// PostgreSQL only (its plans are what it measures). The
// trail is seeded in one statement and its hashes are placeholders.
func BenchmarkAuditPage(b *testing.B) {
	if !storetest.Postgres() {
		b.Skip("measures PostgreSQL's plans: set " + storetest.EnvPostgres)
	}
	n := 20_000
	if v := os.Getenv("HANDOFF_BENCH_AUDIT_EVENTS"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	ctx := context.Background()
	url := storetest.URL(b)
	s, err := store.Open(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	db, err := sql.Open("pgx", url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	benchExec(b, db, seedTrail, n)
	benchExec(b, db, `INSERT INTO api_tokens (id, namespace, name, hash, created_at)
SELECT 'tok_' || ns, ns, ns || '-worker', 'hash_' || ns, now() FROM unnest(ARRAY['orders', 'billing', 'crm', 'mail', 'ledger']) AS ns`)
	b.Logf("seeded %d audit events in %s", n, time.Since(start).Round(time.Millisecond))

	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	span := time.Duration(n) * 86400 * time.Microsecond // one day for a million
	sel := func(f func(*domain.AuditSelect)) domain.AuditSelect {
		q := domain.AuditSelect{AuditQuery: domain.AuditQuery{Limit: 50}, WithSystem: true}
		f(&q)
		return q
	}
	filters := []struct {
		name string
		q    domain.AuditSelect
	}{
		{"none", sel(func(q *domain.AuditSelect) {})},
		{"action=settled", sel(func(q *domain.AuditSelect) { q.Action = "settled" })},
		{"action=claimed", sel(func(q *domain.AuditSelect) { q.Action = "claimed" })},
		{"action=resolved", sel(func(q *domain.AuditSelect) { q.Action = "resolved" })},
		{"action=signed_in", sel(func(q *domain.AuditSelect) { q.Action = "signed_in" })},
		{"action=absent", sel(func(q *domain.AuditSelect) { q.Action = "reconcile_inconclusive" })},
		{"actor=busy_person", sel(func(q *domain.AuditSelect) { q.Actor = "person0@example.com" })},
		{"actor=rare_person", sel(func(q *domain.AuditSelect) { q.Actor = "person4@example.com" })},
		{"actor=system", sel(func(q *domain.AuditSelect) { q.Actor = "handoff" })},
		{"actor=busy_token", sel(func(q *domain.AuditSelect) { q.Actor = "orders-worker" })},
		{"actor=small_token", sel(func(q *domain.AuditSelect) { q.Actor = "ledger-worker" })},
		{"actor=nobody", sel(func(q *domain.AuditSelect) { q.Actor = "nobody@example.com" })},
		{"operation", sel(func(q *domain.AuditSelect) { q.OperationID = "op_b_" + strconv.Itoa(n/6) })},
		{"time=mid_hour", sel(func(q *domain.AuditSelect) { q.From, q.To = t0.Add(span/2), t0.Add(span/2+span/24) })},
		{"time=last_hour", sel(func(q *domain.AuditSelect) { q.From = t0.Add(span - span/24) })},
		{"time=second_half", sel(func(q *domain.AuditSelect) { q.From = t0.Add(span / 2) })},
		{"namespace=big", sel(func(q *domain.AuditSelect) { q.Namespace, q.WithSystem = "orders", false })},
		{"namespace=small", sel(func(q *domain.AuditSelect) { q.Namespace, q.WithSystem = "ledger", false })},
		// The desk's page: newest first, and its People only.
		{"people_only", sel(func(q *domain.AuditSelect) { q.PeopleOnly = true })},
		{"newest/none", sel(func(q *domain.AuditSelect) { q.NewestFirst = true })},
		{"newest/people_only", sel(func(q *domain.AuditSelect) { q.NewestFirst, q.PeopleOnly = true, true })},
		{"newest/actor=rare_person", sel(func(q *domain.AuditSelect) { q.NewestFirst, q.Actor = true, "person4@example.com" })},
		{"newest/action=resolved", sel(func(q *domain.AuditSelect) { q.NewestFirst, q.Action = true, "resolved" })},
		{"newest/time=second_half", sel(func(q *domain.AuditSelect) { q.NewestFirst, q.From = true, t0.Add(span/2) })},
	}
	schemas := []string{"new", "old", "new", "old"}
	if v := os.Getenv("HANDOFF_BENCH_AUDIT_SCHEMAS"); v != "" {
		schemas = strings.Split(v, ",")
	}
	for _, schema := range schemas {
		if schema == "old" {
			benchExec(b, db, oldAuditIndexes)
		} else {
			benchExec(b, db, newAuditIndexes)
		}
		benchExec(b, db, "VACUUM ANALYZE audit_events, api_tokens")
		for _, f := range filters {
			b.Run("schema="+schema+"/"+f.name, func(b *testing.B) {
				var took []time.Duration
				for b.Loop() {
					t := time.Now()
					if _, _, err := s.ListAudit(ctx, f.q); err != nil {
						b.Fatal(err)
					}
					took = append(took, time.Since(t))
				}
				slices.Sort(took)
				b.ReportMetric(float64(took[(len(took)*95+99)/100-1].Microseconds())/1000, "p95-ms")
			})
		}
	}
}

func benchExec(b *testing.B, db *sql.DB, q string, args ...any) {
	b.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		b.Fatalf("%v\n%s", err, q)
	}
}

// The index sets compared: 00016's (as 00023 has it) and the one before it
// (00001, 00003).
const (
	newAuditIndexes = `DROP INDEX IF EXISTS audit_events_action; DROP INDEX IF EXISTS audit_events_namespace;
CREATE INDEX IF NOT EXISTS audit_events_decisions ON audit_events (action, pos)
    WHERE action NOT IN ('registered', 'registered_and_claimed', 'registered_and_began', 'claimed', 'claimed_and_began', 'heartbeat', 'began', 'settled');
CREATE INDEX IF NOT EXISTS audit_events_actor_name ON audit_events (actor_name, pos) WHERE actor_kind <> 'workflow';
CREATE INDEX IF NOT EXISTS audit_events_actor_email ON audit_events (actor_email, pos) WHERE actor_kind <> 'workflow';
CREATE INDEX IF NOT EXISTS audit_events_actor_subject ON audit_events (actor_subject, pos) WHERE actor_kind <> 'workflow'`
	oldAuditIndexes = `DROP INDEX IF EXISTS audit_events_decisions;
DROP INDEX IF EXISTS audit_events_actor_name; DROP INDEX IF EXISTS audit_events_actor_email; DROP INDEX IF EXISTS audit_events_actor_subject;
CREATE INDEX IF NOT EXISTS audit_events_action ON audit_events (action, pos);
CREATE INDEX IF NOT EXISTS audit_events_namespace ON audit_events (namespace, pos)`
)

// seedTrail writes $1 events, three per operation, 86.4 ms apart from
// 2026-01-01. r spreads the kinds of event evenly through the trail: 0.1%
// people's sign-ins (the system stream), 3% people's decisions by five
// people (two busy, three rare), 1% the system's outcomes, 3% the
// three-call lifecycle's claims, begins and heartbeats, the rest the
// two-call lifecycle's register, claim-and-begin and settle. Namespaces:
// orders 50%, billing 25%, crm 15%, mail 9%, ledger 1%, each with its token.
const seedTrail = `
WITH g AS (
    SELECT g, (g * 7919) % 1000 AS r, g / 3 AS op,
           CASE WHEN (g / 3) % 100 < 50 THEN 'orders' WHEN (g / 3) % 100 < 75 THEN 'billing'
                WHEN (g / 3) % 100 < 90 THEN 'crm' WHEN (g / 3) % 100 < 99 THEN 'mail' ELSE 'ledger' END AS ns
    FROM generate_series(0, $1::bigint - 1) AS g
), k AS (
    SELECT g, r, op, ns,
           CASE WHEN r = 999 OR r < 30 THEN 'person' WHEN r < 40 THEN 'system' ELSE 'workflow' END AS kind,
           CASE WHEN r % 10 < 6 THEN 0 WHEN r % 10 < 9 THEN 1 ELSE 2 + g % 3 END AS p
    FROM g
)
INSERT INTO audit_events (id, stream, seq, operation_id, namespace, at, actor_kind, actor_name, actor_namespace,
    actor_issuer, actor_subject, actor_email, actor_role, action, from_state, to_state, reason, detail, request_id,
    client_addr, prev_hash, hash)
SELECT 'ev_b_' || g,
       CASE WHEN r = 999 THEN 'system' ELSE 'op_b_' || op END,
       CASE WHEN r = 999 THEN g ELSE g % 3 + 1 END,
       CASE WHEN r = 999 THEN '' ELSE 'op_b_' || op END,
       CASE WHEN r = 999 THEN '' ELSE ns END,
       timestamptz '2026-01-01 00:00:00+00' + g * interval '86.4 milliseconds',
       kind,
       CASE kind WHEN 'person' THEN 'Person ' || p WHEN 'system' THEN 'handoff' ELSE ns || '-worker' END,
       CASE kind WHEN 'workflow' THEN ns ELSE '' END,
       CASE kind WHEN 'person' THEN 'https://id.example.com' ELSE '' END,
       CASE kind WHEN 'person' THEN 'sub-' || p ELSE '' END,
       CASE kind WHEN 'person' THEN 'person' || p || '@example.com' ELSE '' END,
       CASE kind WHEN 'person' THEN 'operator' ELSE '' END,
       CASE WHEN r = 999 THEN 'signed_in'
            WHEN r < 30 THEN (ARRAY['resolved', 'assigned', 'noted', 'approved', 'rejected', 'revised'])[r % 6 + 1]
            WHEN r < 40 THEN (ARRAY['lease_expired', 'reconciled', 'retries_exhausted'])[r % 3 + 1]
            WHEN r < 70 THEN (ARRAY['claimed', 'began', 'heartbeat'])[r % 3 + 1]
            ELSE (ARRAY['registered', 'claimed_and_began', 'settled'])[g % 3 + 1] END,
       '', 'completed', '',
       '{"result":{"ref":"crm_' || g || '","data":{"id":' || g || ',"owner":"u_9"}}}',
       'req_' || g, '192.0.2.' || (g % 250), md5(g::text) || md5((g + 1)::text), md5((g + 2)::text) || md5((g + 3)::text)
FROM k`
