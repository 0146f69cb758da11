package chaos

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// The per-key model: one operation's lifecycle as a client sees it. Time
// alone moves a lease on (the sweeper, or the next call that touches the
// operation, expires it), so before each step the model may expire a lease
// whose end lies before the call's answer — never one that the server
// could not yet have seen expire. A call whose answer was lost may or may
// not have taken effect; the nondeterministic model keeps both.

type kind uint8

const (
	kRegister kind = iota + 1
	kClaim
	kBegin
	kHeartbeat
	kSettle
	kGet
)

var kindNames = map[kind]string{kRegister: "register", kClaim: "claim", kBegin: "begin",
	kHeartbeat: "heartbeat", kSettle: "settle", kGet: "get"}

// input is one call: what was asked, and when it was answered (the latest
// moment it can have taken effect).
type input struct {
	Kind    kind
	Key     string
	Dedup   bool  // register: the type's provider deduplicates by key
	Claim   bool  // register: claim in the same call
	Begin   bool  // register's claim, claim: begin in the same change (claim.begin)
	Lease   int64 // claim, heartbeat: the lease asked for, ns
	Token   int64 // begin, heartbeat, settle
	Outcome string
	Ref     string
	Call    int64
	Return  int64
}

// output is what came back; Lost when nothing reliable did.
type output struct {
	Lost     bool
	Replayed bool // a settle answered as the replay of one that committed
	Status   int
	Code     string // a problem's code
	Reason   string // a refused claim's reason
	State    string
	Granted  bool // a claim was granted
	Token    int64
	Expires  int64 // a granted or extended lease's end, ns on the history's clock
	Ref      string
}

// state is the operation as the model knows it; comparable, so porcupine's
// default equality serves.
type state struct {
	Exists  bool
	Dedup   bool
	State   string
	Token   int64 // the last fencing token handed out
	Expires int64 // the live lease's end, while leased
	Ref     string
	// Settled lists the settles that committed, ";token outcome ref;" each
	// in token order: a settle sent again with its token is a replay.
	Settled string
}

func (s state) leased() bool { return s.State == "processing" || s.State == "action_pending" }

// expirySlack allows for the server stamping a lease's end a little after
// the client's clock read the call's time.
const expirySlack = int64(250 * time.Millisecond)

// expiries is s and, when its lease may have ended by at, what the expiry
// makes of it.
func expiries(s state, at int64) []state {
	if !s.leased() || s.Expires > at+expirySlack {
		return []state{s}
	}
	out := []state{s}
	e := s
	e.Expires = 0
	switch s.State {
	case "processing": // nothing was sent: back to the queue
		e.State = "received"
		out = append(out, e)
	default: // after begin nobody knows, unless the provider deduplicates
		e.State = "unknown_outcome"
		out = append(out, e)
		if s.Dedup {
			e.State = "failed_retryable"
			out = append(out, e)
		}
	}
	return out
}

// step is the model's transition: every state the call can lead to from
// s, given what came back.
func step(s state, in input, out output) []state {
	var next []state
	for _, p := range expiries(s, in.Return) {
		for _, tr := range transitions(p, in, out) {
			if out.Lost || tr.matches(out) {
				next = append(next, tr.next)
			}
		}
		if out.Lost {
			next = append(next, p) // it may never have happened
		}
	}
	return next
}

// transition is one way the server may answer in from p.
type transition struct {
	next    state
	status  int
	code    string
	reason  string
	state   string // "" when any state is fine (a settle the card judges)
	granted bool
	token   int64
	ref     string
	// replayed: a settle repeated after it committed, answered with the
	// operation as it is and nothing changed (invariant 15).
	replayed bool
}

func (tr transition) matches(out output) bool {
	return tr.status == out.Status && tr.code == out.Code && tr.reason == out.Reason && tr.replayed == out.Replayed &&
		(tr.state == "" || tr.state == out.State) && tr.granted == out.Granted &&
		(!tr.granted || tr.token == out.Token) && (tr.ref == "" || tr.ref == out.Ref)
}

// leaseEnd is the end of a lease the call granted or extended: the answer's
// when it came, else the earliest the server can have set.
func leaseEnd(in input, out output) int64 {
	if !out.Lost && out.Expires > 0 {
		return out.Expires
	}
	return in.Call + in.Lease
}

func transitions(p state, in input, out output) []transition {
	stale := transition{next: p, status: http.StatusConflict, code: "stale_lease"}
	holds := p.leased() && in.Token == p.Token
	switch in.Kind {
	case kRegister:
		status := http.StatusOK
		if !p.Exists {
			p = state{Exists: true, Dedup: in.Dedup, State: "received"}
			status = http.StatusCreated
		}
		if !in.Claim {
			return []transition{{next: p, status: status, state: p.State, ref: p.Ref}}
		}
		trs := claims(p, in, out)
		for i := range trs {
			trs[i].status, trs[i].code = status, ""
		}
		return trs
	case kClaim:
		return claims(p, in, out)
	case kBegin:
		if !holds {
			return []transition{stale}
		}
		n := p
		n.State = "action_pending"
		return []transition{{next: n, status: http.StatusOK, state: n.State}}
	case kHeartbeat:
		if !holds {
			return []transition{stale}
		}
		n := p
		n.Expires = max(p.Expires, leaseEnd(in, out))
		return []transition{{next: n, status: http.StatusOK, state: n.State}}
	case kSettle:
		mark := settleMark(in)
		if !holds {
			if strings.Contains(p.Settled, mark) {
				// The same settle again after it committed: the operation as
				// it is now, nothing written.
				return []transition{{next: p, status: http.StatusOK, state: p.State, ref: p.Ref, replayed: true}}
			}
			return []transition{stale}
		}
		if in.Outcome == "completed" {
			if p.State != "action_pending" {
				return []transition{{next: p, status: http.StatusConflict, code: "invalid_transition"}}
			}
			n := p
			n.State, n.Ref, n.Expires, n.Settled = "completed", in.Ref, 0, p.Settled+mark
			return []transition{{next: n, status: http.StatusOK, state: n.State, ref: n.Ref}}
		}
		// The card judges the outcome; the answer says how.
		var trs []transition
		for _, st := range []string{"failed_retryable", "unknown_outcome", "failed_terminal"} {
			n := p
			n.State, n.Expires, n.Settled = st, 0, p.Settled+mark
			trs = append(trs, transition{next: n, status: http.StatusOK, state: st})
		}
		return trs
	case kGet:
		if !p.Exists {
			return []transition{{next: p, status: http.StatusNotFound, code: "not_found"}}
		}
		return []transition{{next: p, status: http.StatusOK, state: p.State, ref: p.Ref}}
	}
	return nil
}

// settleMark is how state.Settled names a settle: its token, outcome and
// ref. The workload sends a settle again only as it was, so these tell
// one settle from another.
func settleMark(in input) string {
	return fmt.Sprintf(";%d %s %s;", in.Token, in.Outcome, in.Ref)
}

// claims: a claim is granted with the next fencing token, or refused with
// the reason the state gives. A failed_retryable operation may be either,
// depending on whether its retry came due.
func claims(p state, in input, out output) []transition {
	refuse := func(reason string) transition {
		return transition{next: p, status: http.StatusConflict, code: "not_claimable", reason: reason}
	}
	grant := func() transition {
		n := p
		n.State, n.Token, n.Expires = "processing", p.Token+1, leaseEnd(in, out)
		if in.Begin { // a begun claim: the lease and "about to call" in one change
			n.State = "action_pending"
		}
		return transition{next: n, status: http.StatusOK, state: n.State, granted: true, token: n.Token}
	}
	switch p.State {
	case "received":
		return []transition{grant()}
	case "failed_retryable":
		return []transition{grant(), refuse("retry_later")}
	case "completed":
		return []transition{refuse("completed")}
	case "processing", "action_pending":
		return []transition{refuse("in_progress")}
	case "unknown_outcome", "failed_terminal":
		return []transition{refuse("handed_off")}
	}
	return nil
}

// lifecycleModel is the model for porcupine, partitioned by key.
var lifecycleModel = porcupine.NondeterministicModel{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(input).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		sort.Strings(keys)
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []any { return []any{state{}} },
	Step: func(s, in, out any) []any {
		var next []any
		for _, n := range step(s.(state), in.(input), out.(output)) {
			next = append(next, n)
		}
		return next
	},
	DescribeOperation: func(in, out any) string { return describe(in.(input), out.(output)) },
	DescribeState: func(s any) string {
		st := s.(state)
		if !st.Exists {
			return "absent"
		}
		return fmt.Sprintf("%s token=%d ref=%s", st.State, st.Token, st.Ref)
	},
}

func describe(in input, out output) string {
	var b strings.Builder
	b.WriteString(kindNames[in.Kind])
	if in.Token > 0 {
		fmt.Fprintf(&b, "(token %d)", in.Token)
	}
	if in.Outcome != "" {
		fmt.Fprintf(&b, " %s %s", in.Outcome, in.Ref)
	}
	if out.Lost {
		return b.String() + " → lost"
	}
	fmt.Fprintf(&b, " → %d %s%s %s", out.Status, out.Code, out.Reason, out.State)
	if out.Replayed {
		b.WriteString(" (replayed)")
	}
	if out.Granted {
		fmt.Fprintf(&b, " token %d", out.Token)
	}
	return b.String()
}

// answer is the part of any answer the model reads: an operation, a claim,
// or a problem.
type answer struct {
	ID     string `json:"id"`
	State  string `json:"state"`
	Code   string `json:"code"`
	Reason string `json:"reason"`
	Result *struct {
		Ref string `json:"ref"`
	} `json:"result"`
	Lease *struct {
		Token     int64     `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	} `json:"lease"`
	Claim *struct {
		Lease struct {
			Token     int64     `json:"token"`
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"lease"`
	} `json:"claim"`
	ClaimRefused *struct {
		Reason string `json:"reason"`
	} `json:"claim_refused"`
	Operation *answer `json:"operation"`
}

type request struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Claim *struct {
		LeaseSeconds int64 `json:"lease_seconds"`
		Begin        bool  `json:"begin"`
	} `json:"claim"`
	LeaseSeconds int64  `json:"lease_seconds"`
	Begin        bool   `json:"begin"`
	LeaseToken   int64  `json:"lease_token"`
	Outcome      string `json:"outcome"`
	Result       *struct {
		Ref string `json:"ref"`
	} `json:"result"`
}

// operations turns the history into porcupine's operations: keyOf maps an
// operation's id to its key, dedup names the types whose provider
// deduplicates. Calls the server never saw, and calls outside the model,
// are left out; a lost call ends with the history.
func operations(h *history, calls []call, keyOf map[string]string, dedup map[string]bool) []porcupine.Operation {
	end := int64(0)
	for _, c := range calls {
		end = max(end, c.Complete)
	}
	var ops []porcupine.Operation
	for _, c := range calls {
		if c.Refused {
			continue
		}
		var req request
		_ = json.Unmarshal(c.Request, &req)
		in := input{Call: c.Invoke, Return: c.Complete}
		path := strings.TrimPrefix(c.URL, "/v1/operations")
		id, verb, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		switch {
		case c.Method == http.MethodPost && path == "":
			in.Kind, in.Key, in.Dedup = kRegister, req.Key, dedup[req.Type]
			if req.Claim != nil {
				in.Claim, in.Lease, in.Begin = true, req.Claim.LeaseSeconds*int64(time.Second), req.Claim.Begin
			}
		case c.Method == http.MethodGet && id != "" && verb == "":
			in.Kind = kGet
		case c.Method == http.MethodPost && verb == "claim":
			in.Kind, in.Lease, in.Begin = kClaim, req.LeaseSeconds*int64(time.Second), req.Begin
		case c.Method == http.MethodPost && verb == "begin":
			in.Kind, in.Token = kBegin, req.LeaseToken
		case c.Method == http.MethodPost && verb == "heartbeat":
			in.Kind, in.Token, in.Lease = kHeartbeat, req.LeaseToken, req.LeaseSeconds*int64(time.Second)
		case c.Method == http.MethodPost && verb == "settle":
			in.Kind, in.Token, in.Outcome = kSettle, req.LeaseToken, req.Outcome
			if req.Result != nil {
				in.Ref = req.Result.Ref
			}
		default:
			continue
		}
		if in.Kind != kRegister {
			in.Key = keyOf[id]
		}
		if in.Key == "" {
			continue // an id no operation has: nothing to check it against
		}
		out := parseOutput(h, in.Kind, c)
		ret := c.Complete
		if out.Lost {
			ret, in.Return = end+1, math.MaxInt64/2
		}
		ops = append(ops, porcupine.Operation{ClientId: c.Client, Input: in, Call: c.Invoke, Output: out, Return: ret})
	}
	return ops
}

func parseOutput(h *history, k kind, c call) output {
	if c.lost() {
		return output{Lost: true}
	}
	var a answer
	_ = json.Unmarshal(c.Response, &a)
	out := output{Status: c.Status, Code: a.Code, Reason: a.Reason, State: a.State, Replayed: k == kSettle && c.Replayed}
	if c.Status >= 400 {
		out.State = ""
	}
	if a.Result != nil {
		out.Ref = a.Result.Ref
	}
	switch {
	case k == kRegister && a.Claim != nil:
		out.Granted, out.Token, out.Expires = true, a.Claim.Lease.Token, h.wall(a.Claim.Lease.ExpiresAt)
	case k == kRegister && a.ClaimRefused != nil:
		out.Reason = a.ClaimRefused.Reason
	case k == kClaim && c.Status == http.StatusOK && a.Lease != nil && a.Operation != nil:
		out.Granted, out.Token, out.Expires = true, a.Lease.Token, h.wall(a.Lease.ExpiresAt)
		out.State = a.Operation.State
	case k == kHeartbeat && a.Lease != nil:
		out.Expires = h.wall(a.Lease.ExpiresAt)
	}
	return out
}
