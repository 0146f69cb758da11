package domain

import (
	"context"
	"encoding/json"
)

// A settle is idempotent (invariant 15): the worker whose settle committed
// but whose answer was lost sends the same settle again, with the lease
// token that is no longer current. That repeat is answered with the
// operation, as a replay, and writes nothing; any other settle with that
// token is refused as a stale lease, as before.

// SettleDigest is what a settle asked, as compared with a repeat: its
// outcome and, for completed, the result's ref and data (canonical JSON),
// otherwise the error's class and code (class unknown when no error was
// sent, as the settle was judged). The error's message and retry-after are
// left out: they describe the failure, they do not change what was asked.
func SettleDigest(s Settle) string {
	m := map[string]any{"outcome": s.Outcome.String()}
	if s.Outcome == OutcomeCompleted {
		if r := s.Result; r != nil {
			res := map[string]any{"ref": r.Ref}
			if len(r.Data) > 0 {
				data := r.Data
				if c, err := Canonicalize(data); err == nil {
					data = c
				}
				res["data"] = string(data)
			}
			m["result"] = res
		}
	} else {
		e := ErrorInfo{Class: ClassUnknown}
		if s.Error != nil {
			e = *s.Error
		}
		m["error"] = map[string]any{"class": e.Class.String(), "code": e.Code}
	}
	b, _ := json.Marshal(m) // maps of strings: cannot fail; keys sorted
	return "sha256:" + SHA256Hex(b)
}

// SettleReplays decides whether s repeats the settle that ended attempt a
// of op: the attempt is the one s's lease token names, it was settled, and
// what it asked is what s asks. An attempt whose lease expired, or settled
// before digests were kept, has nothing to repeat.
func SettleReplays(op Operation, a Attempt, s Settle) bool {
	if a.OperationID != op.ID || a.LeaseToken != s.LeaseToken || a.SettledAt == nil || a.SettleSHA256 == "" {
		return false
	}
	return a.SettleSHA256 == SettleDigest(s)
}

// SettleOnce is Settle that also says whether the answer replays a settle
// that committed before (the same lease token, outcome, error and result):
// then the operation is returned as it is now and nothing is written.
func (l *Workflow) SettleOnce(ctx context.Context, actor Actor, id string, s Settle) (Operation, bool, error) {
	op, err := l.Settle(ctx, actor, id, s)
	if ErrorCode(err) != EStaleLease {
		return op, false, err
	}
	s = relayedSettle(s)
	cur, _, lerr := l.store.Load(ctx, scope(actor), id)
	if lerr != nil {
		return Operation{}, false, err
	}
	a, found, aerr := l.store.SettledAttempt(ctx, id, s.LeaseToken)
	if aerr != nil {
		return Operation{}, false, aerr
	}
	if !found || !SettleReplays(cur, a, s) {
		return Operation{}, false, err
	}
	return cur, true, nil
}
