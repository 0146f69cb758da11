package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// BenchmarkLifecycleWAL reports what one lifecycle costs PostgreSQL in WAL
// (the search indexer's writes of its text included) and how many of the
// operation row's UPDATEs were HOT, on the audit index set of migration
// 00016 and on the one before it, interleaved: on a fresh
// database, and on one already holding HANDOFF_BENCH_OPERATIONS operations
// (and a million-event trail when that is 500,000 or more). Each window
// starts at a CHECKPOINT, so the full-page writes a busy database pays
// after every checkpoint are in the figure:
//
//	HANDOFF_TEST_POSTGRES=postgres://… HANDOFF_BENCH_OPERATIONS=500000 \
//	  go test -run XXX -bench LifecycleWAL -benchtime 2000x ./store/
//
// The WAL position is the server's, so other databases' writes land in the
// window too: run it on a quiet server and read the minimum of the rounds.
// -benchtime Nx sets the lifecycles per window; 8 goroutines send them.
func BenchmarkLifecycleWAL(b *testing.B) {
	if !storetest.Postgres() {
		b.Skip("measures PostgreSQL's WAL: set " + storetest.EnvPostgres)
	}
	ops := 0
	if v := os.Getenv("HANDOFF_BENCH_OPERATIONS"); v != "" {
		ops, _ = strconv.Atoi(v)
	}
	ctx := context.Background()
	type db struct {
		s   *store.Store
		sql *sql.DB
	}
	open := func(b *testing.B, seeded bool) db {
		url := storetest.URL(b)
		s, err := store.Open(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		conn, err := sql.Open("pgx", url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { conn.Close() })
		if seeded && ops > 0 {
			seedOperations(b, s, conn, ops)
			if ops >= 500_000 {
				benchExec(b, conn, seedTrail, 1_000_000)
			}
		}
		return db{s, conn}
	}
	var seeded db
	if ops > 0 {
		seeded = open(b, true)
	}
	for _, size := range []string{"fresh", "seeded"} {
		if size == "seeded" && ops == 0 {
			continue
		}
		for _, shape := range []string{"two-call", "three-call"} {
			for _, schema := range []string{"new", "old", "new", "old"} {
				b.Run(fmt.Sprintf("%s/%s/schema=%s", size, shape, schema), func(b *testing.B) {
					d := seeded
					if size == "fresh" {
						d = open(b, false)
					}
					if schema == "old" {
						benchExec(b, d.sql, oldAuditIndexes)
					} else {
						benchExec(b, d.sql, newAuditIndexes)
					}
					benchExec(b, d.sql, "VACUUM ANALYZE operations, operation_search, attempts, content_versions, audit_events")
					benchExec(b, d.sql, "CHECKPOINT")
					l := domain.NewLedger(d.s, testCards())
					wal0, upd0, hot0 := walAndUpdates(b, d.sql)
					var seq atomic.Int64
					var wg sync.WaitGroup
					b.ResetTimer()
					n := int64(b.N)
					for range 8 {
						wg.Go(func() {
							for k := seq.Add(1); k <= n; k = seq.Add(1) {
								walLifecycle(b, l, fmt.Sprintf("%s-%d-%d", schema, time.Now().UnixNano(), k), shape == "two-call")
							}
						})
					}
					wg.Wait()
					// The search indexer writes the lifecycles' text after them
					// (migration 00028): its writes are theirs too.
					for {
						k, err := d.s.IndexSearch(ctx, 500)
						if err != nil {
							b.Fatal(err)
						}
						if k < 500 {
							break
						}
					}
					b.StopTimer()
					wal1, _, _ := walAndUpdates(b, d.sql)
					b.ReportMetric(float64(wal1-wal0)/float64(b.N), "WAL-B/lifecycle")
					if b.N < 100 {
						return // the framework's first, one-lifecycle run: no wait for the counts
					}
					// An idle backend flushes its table statistics within ten seconds.
					time.Sleep(11 * time.Second)
					_, upd1, hot1 := walAndUpdates(b, d.sql)
					if upd1 > upd0 {
						b.ReportMetric(float64(hot1-hot0)/float64(upd1-upd0)*100, "HOT-%")
					}
				})
			}
		}
	}
}

// walLifecycle registers, claims (beginning at once for the two-call
// shape) and settles one operation.
func walLifecycle(b *testing.B, l *domain.Ledger, key string, twoCall bool) {
	ctx := context.Background()
	res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
		Content: json.RawMessage(`{"title":"Follow up ` + key + `","owner":"u_9"}`), Claim: &domain.Claim{Worker: "w1", Begin: twoCall}})
	if err != nil || res.Claim == nil {
		b.Error(err, res.ClaimRefused) // not Fatal: the lifecycles run on goroutines of their own
		return
	}
	id, tok := res.Operation.ID, res.Claim.Lease.Token
	if !twoCall {
		if _, err := l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: tok}); err != nil {
			b.Error(err)
			return
		}
	}
	if _, err := l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeCompleted,
		Result: &domain.Result{Ref: "crm_" + key}}); err != nil {
		b.Error(err)
	}
}

// walAndUpdates reads the server's WAL position and the operations table's
// UPDATE and HOT UPDATE counts.
func walAndUpdates(b *testing.B, db *sql.DB) (wal, upd, hot int64) {
	b.Helper()
	err := db.QueryRow(`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::bigint, n_tup_upd, n_tup_hot_upd
FROM pg_stat_user_tables WHERE relid = 'operations'::regclass`).Scan(&wal, &upd, &hot)
	if err != nil {
		b.Fatal(err)
	}
	return wal, upd, hot
}

// seedOperations copies one settled operation n times under new ids, keys
// and provider keys, spread over the day before: a table as a busy
// deployment has it, with its search rows (written by the insert trigger).
func seedOperations(b *testing.B, s *store.Store, db *sql.DB, n int) {
	b.Helper()
	walLifecycle(b, domain.NewLedger(s, testCards()), "template", true)
	rows, err := db.Query(`SELECT column_name FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = 'operations' AND is_generated = 'NEVER' ORDER BY ordinal_position`)
	if err != nil {
		b.Fatal(err)
	}
	var cols, vals []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			b.Fatal(err)
		}
		v := c
		switch c {
		case "id":
			v = "'op_seed_' || lpad(g::text, 8, '0')"
		case "key":
			v = "'seed-' || g"
		case "provider_key":
			v = "'hk_' || md5('seed-' || g)" // as the provider keys Handoff makes: random, all under one prefix
		case "created_at", "updated_at":
			v = "now() - interval '1 day' + g * interval '100 milliseconds'"
		case "result_ref":
			v = "'crm_seed_' || g"
		}
		cols, vals = append(cols, c), append(vals, v)
	}
	rows.Close()
	start := time.Now()
	benchExec(b, db, "INSERT INTO operations ("+strings.Join(cols, ", ")+") SELECT "+strings.Join(vals, ", ")+
		" FROM operations, generate_series(1, $1::bigint) AS g WHERE key = 'template'", n)
	b.Logf("seeded %d operations in %s", n, time.Since(start).Round(time.Millisecond))
}
