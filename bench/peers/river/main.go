// Command river runs River, a Go job queue on PostgreSQL, through the
// nearest thing it has to one of Handoff's lifecycles: a job inserted
// under a unique key (the idempotency key), fetched by a worker under
// River's own lease, a work function that does nothing but count, and the
// job completed — each step a commit of River's. N clients insert, one
// job per lifecycle, as workflows would; the run ends when every inserted
// job has been worked, so each one counted went through the whole
// lifecycle. It prints one line:
//
//	river lifecycles=N completed_in_db=N seconds=S lifecycles_per_s=R
//
// scripts/bench-rounds runs it beside Handoff on the same PostgreSQL.
//
//	go run . -dsn 'postgres://postgres@127.0.0.1:5432/rbench?sslmode=disable' -c 16 -d 10s
//
// The database must exist; River's tables are migrated in it and its job
// table emptied before each run.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// operationArgs is one job: the key makes it unique, as an operation's key
// makes it one row in Handoff.
type operationArgs struct {
	Key   string `json:"key" river:"unique"`
	Owner string `json:"owner"`
	Title string `json:"title"`
}

func (operationArgs) Kind() string { return "operation" }

func (operationArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// worked counts the jobs whose work function ran.
var worked atomic.Int64

type operationWorker struct {
	river.WorkerDefaults[operationArgs]
}

func (operationWorker) Work(context.Context, *river.Job[operationArgs]) error {
	worked.Add(1)
	return nil
}

func main() {
	dsn := flag.String("dsn", os.Getenv("DATABASE_URL"), "the PostgreSQL database to run in")
	clients := flag.Int("c", 8, "concurrent clients, each inserting one job per lifecycle")
	dur := flag.Duration("d", 15*time.Second, "how long the clients insert")
	workers := flag.Int("w", 16, "River's workers on the queue")
	flag.Parse()
	if *dsn == "" || *clients < 1 {
		log.Fatal("river: -dsn (or DATABASE_URL) and -c ≥ 1 are required")
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, *dsn)
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	driver := riverpgxv5.New(pool)
	migrator, err := rivermigrate.New(driver, nil)
	if err != nil {
		log.Fatal(err)
	}
	if _, err := migrator.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		log.Fatal(err)
	}
	if _, err := pool.Exec(ctx, "TRUNCATE river_job"); err != nil {
		log.Fatal(err)
	}
	ws := river.NewWorkers()
	river.AddWorker(ws, &operationWorker{})
	rc, err := river.NewClient(driver, &river.Config{
		Queues:  map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: *workers}},
		Workers: ws,
		// Fetch soon after a job arrives: the clients are waiting on no
		// answer, but the run measures whole lifecycles.
		FetchCooldown:     5 * time.Millisecond,
		FetchPollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		log.Fatal(err)
	}
	if err := rc.Start(ctx); err != nil {
		log.Fatal(err)
	}

	var seq atomic.Int64
	var failed atomic.Value
	start := time.Now()
	deadline := start.Add(*dur)
	var wg sync.WaitGroup
	for range *clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				key := fmt.Sprintf("op-%d", seq.Add(1))
				if _, err := rc.Insert(ctx, operationArgs{Key: key, Owner: "u_9", Title: "Follow up"}, nil); err != nil {
					failed.CompareAndSwap(nil, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		log.Fatal(err)
	}
	inserted := seq.Load()
	// The backlog drains before the clock stops: every job counted was
	// fetched, worked and completed.
	for worked.Load() < inserted && time.Since(deadline) < time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	secs := time.Since(start).Seconds()
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := rc.Stop(sctx); err != nil {
		log.Fatal(err)
	}
	var completed int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM river_job WHERE state = 'completed'").Scan(&completed); err != nil {
		log.Fatal(err)
	}
	n := worked.Load()
	fmt.Printf("river lifecycles=%d completed_in_db=%d seconds=%.2f lifecycles_per_s=%.1f\n", n, completed, secs, float64(n)/secs)
	if completed != n {
		log.Fatalf("river: %d jobs worked, %d completed in the database", n, completed)
	}
}
