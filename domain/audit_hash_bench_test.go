package domain

import (
	"encoding/json"
	"testing"
	"time"
)

// What chaining costs a lifecycle. Chaining is one SHA-256 over the
// canonical JSON of each event, in process: the previous hash is on the
// operation row (audit_head), so it costs no database round trip. These
// benchmarks compare the decision with and without the seal; the e2e
// lifecycle benchmark gives the time of a whole lifecycle to set it against.
//
//	go test -run XXX -bench 'AuditHash|DecideSettle|NewOperationBegun' -benchmem ./domain/

func benchSettleInput(b *testing.B) (Operation, Env) {
	card := Card{Name: "crm.task.create", Provider: "acme-crm", ProviderIdempotency: IdempotencyNone, Lookup: LookupManual,
		Retry:     RetryPolicy{MaxAttempts: 5, MaxElapsed: time.Hour, Backoff: 2 * time.Second, BackoffMax: 5 * time.Minute},
		Retryable: []ErrorClass{ClassTransient}, Terminal: []ErrorClass{ClassValidation}, Lease: 30 * time.Second}
	ids := &IDSource{}
	env := Env{Card: card, Now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), NewID: ids.New, Jitter: func() float64 { return 0.5 },
		Actor: Actor{Kind: ActorWorkflow, Name: "n8n-prod", Namespace: "campaigns"}, RequestID: "req_01JF", ClientAddr: "192.0.2.7"}
	content := []byte(`{"due":"2026-12-01","owner":"u_9","title":"Follow up"}`)
	ch, err := NewOperation(Registration{Namespace: "campaigns", Key: "evt_42:crm_task", Type: card.Name, Content: content,
		Claim: &Claim{Worker: "w-1"}}, content, false, env)
	if err != nil {
		b.Fatal(err)
	}
	begun, err := Decide(ch.Op, Begin{LeaseToken: ch.Op.LeaseToken}, env)
	if err != nil {
		b.Fatal(err)
	}
	return begun.Op, env
}

func settleCmd(op Operation) Settle {
	return Settle{LeaseToken: op.LeaseToken, Outcome: OutcomeCompleted,
		Result: &Result{Ref: "crm_123", Data: json.RawMessage(`{"id":"crm_123","url":"https://crm.example.com/tasks/123"}`)}}
}

// BenchmarkAuditHash is the seal of one typical event: canonical JSON and
// SHA-256.
func BenchmarkAuditHash(b *testing.B) {
	op, env := benchSettleInput(b)
	ch, err := Decide(op, settleCmd(op), env)
	if err != nil {
		b.Fatal(err)
	}
	e := ch.Events[0]
	b.ReportAllocs()
	for b.Loop() {
		_ = HashEvent(e)
	}
}

// BenchmarkDecideSettle decides a settle with its audit event sealed (what
// the ledger does) and unsealed (the same decision without the chain).
func BenchmarkDecideSettle(b *testing.B) {
	op, env := benchSettleInput(b)
	cmd := settleCmd(op)
	b.Run("sealed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Decide(op, cmd, env); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unsealed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ch, err := decide(op, cmd, env)
			if err != nil {
				b.Fatal(err)
			}
			stamp(&ch, env)
		}
	})
}

// BenchmarkNewOperationBegun decides the two-call lifecycle's first change:
// a registration that claims and begins, its event sealed.
func BenchmarkNewOperationBegun(b *testing.B) {
	_, env := benchSettleInput(b)
	content := []byte(`{"due":"2026-12-01","owner":"u_9","title":"Follow up"}`)
	r := Registration{Namespace: "campaigns", Key: "evt_42:crm_task", Type: env.Card.Name, Content: content, EventID: "evt_42",
		Claim: &Claim{Worker: "w-1", Begin: true}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := NewOperation(r, content, false, env); err != nil {
			b.Fatal(err)
		}
	}
}
