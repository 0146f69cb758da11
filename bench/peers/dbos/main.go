// Command dbos runs DBOS Transact for Go — durable workflows on PostgreSQL,
// the nearest peer to Handoff's guarantees — through one of Handoff's
// lifecycles: a workflow started under a caller-chosen ID (the idempotency
// key: a second start under it returns the recorded result without
// running), one checkpointed step standing for the provider call (it
// returns a provider reference, which DBOS records before the workflow
// goes on), and the caller awaiting the workflow's result. DBOS commits at
// the start, at the step's checkpoint and at the end, in process, no HTTP.
// N clients each start a workflow under a fresh ID and await it. It prints
// one line:
//
//	dbos lifecycles=N seconds=S lifecycles_per_s=R completed_in_db=N steps_in_db=N
//
// and fails unless DBOS's own tables hold one SUCCESS workflow and one step
// checkpoint per lifecycle. scripts/bench-rounds runs it beside Handoff on
// the same PostgreSQL.
//
//	go run . -dsn 'postgres://postgres@127.0.0.1:5432/dbench?sslmode=disable' -c 16 -d 10s
//
// DBOS creates the database if missing and keeps its tables in schema
// "dbos"; they are emptied before each run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schema is where DBOS keeps its system tables (its default, named here
// because the reset and the check below read them).
const schema = "dbos"

type operation struct {
	Key   string `json:"key"`
	Owner string `json:"owner"`
	Title string `json:"title"`
}

// call is the operation's one side effect, checkpointed by DBOS.
func call(key string) dbos.Step[string] {
	return func(context.Context) (string, error) { return "crm_" + key, nil }
}

func runOperation(ctx dbos.Context, op operation) (string, error) {
	return dbos.RunAsStep(ctx, call(op.Key), dbos.WithStepName("call"))
}

func main() {
	dsn := flag.String("dsn", os.Getenv("DATABASE_URL"), "the PostgreSQL database to run in (created if missing)")
	clients := flag.Int("c", 8, "concurrent clients, each starting a workflow under a fresh ID and awaiting it")
	dur := flag.Duration("d", 15*time.Second, "how long the clients run")
	flag.Parse()
	if *dsn == "" || *clients < 1 {
		log.Fatal("dbos: -dsn (or DATABASE_URL) and -c ≥ 1 are required")
	}
	ctx := context.Background()
	// DBOS logs at info to stdout; the result line is stdout's only line.
	quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	dctx, err := dbos.NewContext(ctx, dbos.Config{AppName: "handoff-peer", DatabaseURL: *dsn,
		DatabaseSchema: schema, Logger: quiet})
	if err != nil {
		log.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, *dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	// Fresh tables: the IDs op-1, op-2… must be new (a known ID would
	// answer from the record without running) and the counts this run's.
	if _, err := pool.Exec(ctx, "TRUNCATE "+schema+".workflow_status, "+schema+".operation_outputs CASCADE"); err != nil {
		log.Fatal(err)
	}
	dbos.RegisterWorkflow(dctx, runOperation, dbos.WithWorkflowName("operation"))
	if err := dbos.Launch(dctx); err != nil {
		log.Fatal(err)
	}

	var seq, done atomic.Int64
	var failed atomic.Value
	start := time.Now()
	deadline := start.Add(*dur)
	var wg sync.WaitGroup
	for range *clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				key := fmt.Sprintf("op-%d", seq.Add(1))
				h, err := dbos.RunWorkflow(dctx, runOperation, operation{Key: key, Owner: "u_9", Title: "Follow up"},
					dbos.WithWorkflowID(key))
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				ref, err := h.GetResult()
				if err == nil && ref != "crm_"+key {
					err = fmt.Errorf("workflow %s returned %q", key, ref)
				}
				if err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	dbos.Shutdown(dctx, 10*time.Second)
	if err, ok := failed.Load().(error); ok {
		log.Fatal(err)
	}
	var completed, steps int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+schema+".workflow_status WHERE status = 'SUCCESS'").Scan(&completed); err != nil {
		log.Fatal(err)
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+schema+".operation_outputs").Scan(&steps); err != nil {
		log.Fatal(err)
	}
	n := done.Load()
	fmt.Printf("dbos lifecycles=%d seconds=%.2f lifecycles_per_s=%.1f completed_in_db=%d steps_in_db=%d\n",
		n, secs, float64(n)/secs, completed, steps)
	if completed != n || steps != n {
		log.Fatalf("dbos: %d lifecycles awaited, %d workflows SUCCESS and %d step checkpoints in the database", n, completed, steps)
	}
}
