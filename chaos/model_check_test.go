package chaos

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// The model on hand-written histories: it must accept what the protocol
// allows, lost answers included, and refuse what a broken fence or a lost
// acknowledgement would produce. These run without a database.

const ms = int64(time.Millisecond)

type histOp struct {
	client     int
	call, ret  int64 // ms
	in         input
	out        output
	lostAnswer bool
}

func checkHistory(ops []histOp) porcupine.CheckResult {
	var h []porcupine.Operation
	end := int64(0)
	for _, o := range ops {
		end = max(end, o.ret*ms)
	}
	for _, o := range ops {
		in, out := o.in, o.out
		in.Key = "k"
		in.Call, in.Return = o.call*ms, o.ret*ms
		ret := o.ret * ms
		if o.lostAnswer {
			out = output{Lost: true}
			in.Return, ret = 1<<60, end+1
		}
		h = append(h, porcupine.Operation{ClientId: o.client, Input: in, Call: o.call * ms, Output: out, Return: ret})
	}
	return porcupine.CheckOperationsTimeout(lifecycleModel.ToModel(), h, 10*time.Second)
}

var (
	regClaim = input{Kind: kRegister, Claim: true, Lease: 1000 * ms}
	granted  = func(tok, expiresMs int64) output {
		return output{Status: 201, State: "processing", Granted: true, Token: tok, Expires: expiresMs * ms}
	}
	claimed = func(tok, expiresMs int64) output {
		return output{Status: 200, State: "processing", Granted: true, Token: tok, Expires: expiresMs * ms}
	}
	stale = output{Status: 409, Code: "stale_lease"}
)

func TestModel_AcceptsALifecycleWithALostClaimAnswer(t *testing.T) {
	got := checkHistory([]histOp{
		{client: 0, call: 0, ret: 10, in: regClaim, lostAnswer: true}, // token 1, answer lost
		{client: 1, call: 1500, ret: 1510, in: input{Kind: kClaim, Lease: 5000 * ms}, out: claimed(2, 6500)},
		{client: 1, call: 1520, ret: 1530, in: input{Kind: kBegin, Token: 2}, out: output{Status: 200, State: "action_pending"}},
		{client: 0, call: 1540, ret: 1550, in: input{Kind: kBegin, Token: 1}, out: stale},
		{client: 1, call: 1600, ret: 1610, in: input{Kind: kSettle, Token: 2, Outcome: "completed", Ref: "r"},
			out: output{Status: 200, State: "completed", Ref: "r"}},
		{client: 2, call: 1700, ret: 1710, in: input{Kind: kGet}, out: output{Status: 200, State: "completed", Ref: "r"}},
	})
	if got != porcupine.Ok {
		t.Fatalf("a legal history was judged %s", got)
	}
}

func TestModel_RefusesAStaleTokenAccepted(t *testing.T) {
	got := checkHistory([]histOp{
		{client: 0, call: 0, ret: 10, in: regClaim, out: granted(1, 1000)},
		{client: 1, call: 1500, ret: 1510, in: input{Kind: kClaim, Lease: 5000 * ms}, out: claimed(2, 6500)},
		{client: 0, call: 1540, ret: 1550, in: input{Kind: kBegin, Token: 1}, out: output{Status: 200, State: "action_pending"}},
	})
	if got != porcupine.Illegal {
		t.Fatalf("a begin with the lapsed token accepted was judged %s", got)
	}
}

func TestModel_RefusesASecondGrantWhileTheLeaseLives(t *testing.T) {
	got := checkHistory([]histOp{
		{client: 0, call: 0, ret: 10, in: regClaim, out: granted(1, 1000)},
		{client: 1, call: 200, ret: 210, in: input{Kind: kClaim, Lease: 5000 * ms}, out: claimed(2, 5200)},
	})
	if got != porcupine.Illegal {
		t.Fatalf("a claim granted while the first lease lived was judged %s", got)
	}
}

func TestModel_RefusesALostAcknowledgement(t *testing.T) {
	got := checkHistory([]histOp{
		{client: 0, call: 0, ret: 10, in: regClaim, out: granted(1, 1000)},
		{client: 0, call: 20, ret: 30, in: input{Kind: kBegin, Token: 1}, out: output{Status: 200, State: "action_pending"}},
		{client: 0, call: 40, ret: 50, in: input{Kind: kSettle, Token: 1, Outcome: "completed", Ref: "r"},
			out: output{Status: 200, State: "completed", Ref: "r"}},
		{client: 1, call: 2000, ret: 2010, in: input{Kind: kGet}, out: output{Status: 200, State: "unknown_outcome"}},
	})
	if got != porcupine.Illegal {
		t.Fatalf("an acknowledged settle that vanished was judged %s", got)
	}
}

func TestModel_AcceptsALostSettleEitherWay(t *testing.T) {
	for state, ref := range map[string]string{"completed": "r", "unknown_outcome": ""} {
		got := checkHistory([]histOp{
			{client: 0, call: 0, ret: 10, in: regClaim, out: granted(1, 1000)},
			{client: 0, call: 20, ret: 30, in: input{Kind: kBegin, Token: 1}, out: output{Status: 200, State: "action_pending"}},
			{client: 0, call: 40, ret: 50, in: input{Kind: kSettle, Token: 1, Outcome: "completed", Ref: "r"}, lostAnswer: true},
			{client: 1, call: 2000, ret: 2010, in: input{Kind: kGet}, out: output{Status: 200, State: state, Ref: ref}},
		})
		if got != porcupine.Ok {
			t.Errorf("a lost settle, then %s, was judged %s", state, got)
		}
	}
}

// A settle sent again after it committed (its answer lost) is answered
// 200 as a replay; any other settle with that token, or the same one
// before anything committed it, is not.
func TestModel_SettleReplay(t *testing.T) {
	settle := input{Kind: kSettle, Token: 1, Outcome: "completed", Ref: "r"}
	replayed := output{Status: 200, State: "completed", Ref: "r", Replayed: true}
	lifecycle := func(first histOp, then ...histOp) []histOp {
		return append([]histOp{
			{client: 0, call: 0, ret: 10, in: regClaim, out: granted(1, 1000)},
			{client: 0, call: 20, ret: 30, in: input{Kind: kBegin, Token: 1}, out: output{Status: 200, State: "action_pending"}},
			first,
		}, then...)
	}
	for name, c := range map[string]struct {
		ops  []histOp
		want porcupine.CheckResult
	}{
		"answer lost, then replayed": {lifecycle(histOp{client: 0, call: 40, ret: 50, in: settle, lostAnswer: true},
			histOp{client: 0, call: 60, ret: 70, in: settle, out: replayed}), porcupine.Ok},
		"answered, then replayed": {lifecycle(histOp{client: 0, call: 40, ret: 50, in: settle, out: output{Status: 200, State: "completed", Ref: "r"}},
			histOp{client: 0, call: 60, ret: 70, in: settle, out: replayed}), porcupine.Ok},
		"the same settle after it committed refused": {lifecycle(histOp{client: 0, call: 40, ret: 50, in: settle,
			out: output{Status: 200, State: "completed", Ref: "r"}}, histOp{client: 0, call: 60, ret: 70, in: settle, out: stale}), porcupine.Illegal},
		"another ref replayed": {lifecycle(histOp{client: 0, call: 40, ret: 50, in: settle, out: output{Status: 200, State: "completed", Ref: "r"}},
			histOp{client: 0, call: 60, ret: 70, in: input{Kind: kSettle, Token: 1, Outcome: "completed", Ref: "s"}, out: replayed}), porcupine.Illegal},
		"another ref refused": {lifecycle(histOp{client: 0, call: 40, ret: 50, in: settle, out: output{Status: 200, State: "completed", Ref: "r"}},
			histOp{client: 0, call: 60, ret: 70, in: input{Kind: kSettle, Token: 1, Outcome: "completed", Ref: "s"}, out: stale}), porcupine.Ok},
		"another outcome replayed": {lifecycle(histOp{client: 0, call: 40, ret: 50, in: settle, out: output{Status: 200, State: "completed", Ref: "r"}},
			histOp{client: 0, call: 60, ret: 70, in: input{Kind: kSettle, Token: 1, Outcome: "unknown_outcome"},
				out: output{Status: 200, State: "completed", Ref: "r", Replayed: true}}), porcupine.Illegal},
		"a token that never settled refused":  {neverSettled(stale), porcupine.Ok},
		"a token that never settled replayed": {neverSettled(output{Status: 200, State: "processing", Replayed: true}), porcupine.Illegal},
	} {
		if got := checkHistory(c.ops); got != c.want {
			t.Errorf("%s: judged %s, want %s", name, got, c.want)
		}
	}
}

// neverSettled: token 1's lease lapses before begin, token 2 is granted,
// then token 1 settles, answered out.
func neverSettled(out output) []histOp {
	return []histOp{
		{client: 0, call: 0, ret: 10, in: regClaim, out: granted(1, 1000)},
		{client: 1, call: 1500, ret: 1510, in: input{Kind: kClaim, Lease: 5000 * ms}, out: claimed(2, 6500)},
		{client: 0, call: 1600, ret: 1610, in: input{Kind: kSettle, Token: 1, Outcome: "failed_retryable"}, out: out},
	}
}
