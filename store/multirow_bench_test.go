package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// BenchmarkGroupCommit_flush: flushes of 2 or 16 lifecycles — the
// registrations, then their begins, then their settles — written as multi-row
// statements or as a statement per change; ns/op is per lifecycle.
func BenchmarkGroupCommit_flush(b *testing.B) {
	if !storetest.Postgres() {
		b.Skip("group commit is PostgreSQL's (set " + storetest.EnvPostgres + ")")
	}
	for _, tc := range []struct {
		flush int
		multi bool
	}{{2, true}, {2, false}, {4, true}, {4, false}, {8, true}, {8, false}, {16, true}, {16, false}} {
		flush, multi := tc.flush, tc.multi
		b.Run(fmt.Sprintf("flush=%d/multi=%v", flush, multi), func(b *testing.B) {
			store.SetMultiRow(multi)
			defer store.SetMultiRow(true)
			s := storetest.New(b)
			ids := &domain.IDSource{}
			env := domain.Env{Card: testCards()["crm.task.create"], Actor: wf, NewID: ids.New, Jitter: func() float64 { return 0 }}
			n := 0
			b.ResetTimer()
			for b.Loop() {
				if n%flush == 0 {
					b.StopTimer()
					regs := make([]domain.Change, flush)
					for i := range regs {
						env.Now = time.Now().UTC().Truncate(time.Microsecond)
						ch, err := domain.NewOperation(domain.Registration{Namespace: wf.Namespace, Key: fmt.Sprintf("b%d", n+i),
							Type: "crm.task.create", Claim: &domain.Claim{Worker: "w1"}}, []byte(`{"a":1}`), false, env)
						if err != nil {
							b.Fatal(err)
						}
						regs[i] = ch
					}
					b.StartTimer()
					lifecycles(b, s, env, regs)
				}
				n++
			}
		})
	}
}

// lifecycles writes regs, then their begins, then their settles, one flush
// each.
func lifecycles(b *testing.B, s *store.Store, env domain.Env, regs []domain.Change) {
	if created, errs := store.CreateTogether(s, regs); !created[0] || errs[0] != nil {
		b.Fatalf("create: %v", errs[0])
	}
	for _, cmd := range []func(op domain.Operation) domain.Command{
		func(op domain.Operation) domain.Command { return domain.Begin{LeaseToken: op.LeaseToken} },
		func(op domain.Operation) domain.Command {
			return domain.Settle{LeaseToken: op.LeaseToken, Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "r"}}
		},
	} {
		chs := make([]domain.Change, len(regs))
		for i := range regs {
			env.Now = time.Now().UTC().Truncate(time.Microsecond)
			ch, err := domain.Decide(regs[i].Op, cmd(regs[i].Op), env)
			if err != nil {
				b.Fatal(err)
			}
			chs[i], regs[i] = ch, ch
		}
		if written, errs := store.ApplyTogether(s, chs); !written[0] || errs[0] != nil {
			b.Fatalf("apply: %v", errs[0])
		}
	}
}
