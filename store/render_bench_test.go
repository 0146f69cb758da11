package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// recordingStore writes through its store and keeps every change it was
// given, in order.
type recordingStore struct {
	*store.Store
	creates, applies []domain.Change
}

func (r *recordingStore) Create(ctx context.Context, ch domain.Change) (domain.Operation, bool, error) {
	r.creates = append(r.creates, ch)
	return r.Store.Create(ctx, ch)
}

func (r *recordingStore) Apply(ctx context.Context, ch domain.Change) error {
	r.applies = append(r.applies, ch)
	return r.Store.Apply(ctx, ch)
}

// lifecycleChanges are the changes the Ledger decides for n lifecycles as
// handoff-load runs them: a registration with an inline claim (begun at
// once unless separate), a begin of its own if separate, a settle.
func lifecycleChanges(b *testing.B, n int, separate bool) (creates, applies []domain.Change) {
	ctx := context.Background()
	rs := &recordingStore{Store: storetest.New(b)}
	l := domain.NewLedger(rs, testCards())
	for i := range n {
		key := fmt.Sprintf("k%d:task", i)
		res, err := l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
			Content: json.RawMessage(`{"title":"Follow up","owner":"u_9","ref":"` + key + `"}`),
			Claim:   &domain.Claim{Worker: "handoff-load", Lease: 30 * time.Second, Begin: !separate}})
		if err != nil {
			b.Fatal(err)
		}
		id, tok := res.Operation.ID, res.Claim.Lease.Token
		if separate {
			if _, err := l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: tok}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeCompleted,
			Result: &domain.Result{Ref: "crm_" + key}}); err != nil {
			b.Fatal(err)
		}
	}
	if len(rs.creates) != n || len(rs.applies)%n != 0 {
		b.Fatalf("%d creates and %d applies for %d lifecycles", len(rs.creates), len(rs.applies), n)
	}
	return rs.creates, rs.applies
}

// BenchmarkRender_lifecycle is the server's cost of turning one lifecycle's
// changes into statements — plans and rendering, no database: every call
// of the three-call (register with a claim, begin, settle) and two-call
// (the claim begun at once, settle) lifecycles as single statements (a
// flush of one), and 16 lifecycles' calls as multi-row statements (a
// flush of 16 of each kind). Its allocs/op is the figure to compare: the
// machine's noise does not move it.
//
// The statement cache's self-check (on in the package's tests) renders
// every statement a second time; it is off here, as in the server.
func BenchmarkRender_lifecycle(b *testing.B) {
	const n = 16
	defer store.VerifyStatementCache(false)()
	for _, calls := range []int{3, 2} {
		creates, applies := lifecycleChanges(b, n, calls == 3)
		per := len(applies) / n
		b.Run(fmt.Sprintf("calls=%d/single", calls), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				k := i % n
				store.RenderSingle(creates[k], true)
				for _, ch := range applies[k*per : (k+1)*per] {
					store.RenderSingle(ch, false)
				}
			}
		})
		b.Run(fmt.Sprintf("calls=%d/multi%d", calls, n), func(b *testing.B) {
			b.ReportAllocs()
			calls := make([][]domain.Change, per)
			for j := range per {
				for k := range n {
					calls[j] = append(calls[j], applies[k*per+j])
				}
			}
			for b.Loop() {
				store.RenderMulti(creates, true)
				for _, chs := range calls {
					store.RenderMulti(chs, false)
				}
			}
		})
	}
}
