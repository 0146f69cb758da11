package chaos

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/opshandoff/handoff/sandbox"
)

// report is what the checks found, for the log and the artefacts.
type report struct {
	calls, lost, refused, keys, completed, executions int
	resent, doubles                                   int // keys executed again for a recorded reason, and without one
	acked, lostAcked                                  int // settles acknowledged, and those not visible afterwards
	visualize                                         func(path string) error
}

// dbOp is an operation as the database holds it after the run.
type dbOp struct {
	id, key, typ, state, ref, providerKey string
	// resends are the re-sends the ledger recorded as safe: a settle the
	// card judged retryable because the provider deduplicates by key, or
	// the system's event after a lease lapsed.
	resends int
}

// check waits for every lease to lapse, then runs the direct checks and
// the linearizability check on the history.
func check(t *testing.T, c *cluster, h *history, sb *sandbox.Sandbox) report {
	t.Helper()
	db := c.db()
	calls := h.snapshot()
	r := report{calls: len(calls)}
	for _, cl := range calls {
		if cl.Refused {
			r.refused++
		} else if cl.lost() {
			r.lost++
		}
		if cl.Status >= 500 && cl.Status != http.StatusServiceUnavailable {
			t.Errorf("%s %s answered %d: %s", cl.Method, cl.URL, cl.Status, cl.Response)
		}
	}
	leftInFlight(t, db)
	ops := loadOps(t, db)
	r.keys = len(ops)
	keyOf := map[string]string{}
	for _, op := range ops {
		keyOf[op.id] = op.key
		if op.state == "completed" {
			r.completed++
		}
		n := sb.Executions(op.providerKey)
		r.executions += n
		if n > 1 && n <= 1+op.resends {
			r.resent++
		}
		if n > 1+op.resends {
			r.doubles++
			t.Errorf("%s (%s): the provider executed %d times under %s; the ledger recorded %d safe re-sends",
				op.key, op.typ, n, op.providerKey, op.resends)
		}
	}
	r.acked, r.lostAcked = acknowledgedSettles(t, calls, ops)
	fencingTokens(t, db, calls, keyOf)
	if out, err := c.cli("audit", "verify", "--db"); err != nil {
		t.Errorf("audit verify --db: %v\n%s", err, out)
	}

	linearizable(t, &r, operations(h, calls, keyOf, map[string]bool{typeEmail: true}))
	return r
}

// leftInFlight: once the longest lease has lapsed and the sweeper has
// run, no operation is still processing or action_pending.
func leftInFlight(t *testing.T, db *sql.DB) {
	var n int
	for deadline := time.Now().Add(time.Duration(leaseSecs)*time.Second + 10*time.Second); ; time.Sleep(200 * time.Millisecond) {
		err := db.QueryRow(`SELECT count(*) FROM operations WHERE state IN ('processing', 'action_pending')`).Scan(&n)
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d operations are still processing or action_pending after their leases lapsed (%v)", n, err)
			return
		}
	}
}

func loadOps(t *testing.T, db *sql.DB) []dbOp {
	rows, err := db.Query(`SELECT o.id, o.key, o.type, o.state, coalesce(o.result_ref, ''), o.provider_key,
		(SELECT count(*) FROM audit_events e WHERE e.operation_id = o.id AND e.action = 'resend_within_retention') +
		(SELECT count(*) FROM attempts a WHERE a.operation_id = o.id AND a.error_code = 'resend_within_retention')
		FROM operations o ORDER BY o.key`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var ops []dbOp
	for rows.Next() {
		var o dbOp
		if err := rows.Scan(&o.id, &o.key, &o.typ, &o.state, &o.ref, &o.providerKey, &o.resends); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, o)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return ops
}

// acknowledgedSettles: a settle answered 200 completed is completed with
// its reference afterwards; one answered as handed to a person
// (unknown_outcome, failed_terminal) is still there, since nobody decided.
func acknowledgedSettles(t *testing.T, calls []call, ops []dbOp) (acked, lost int) {
	byID := map[string]dbOp{}
	for _, op := range ops {
		byID[op.id] = op
	}
	for _, cl := range calls {
		id, ok := strings.CutSuffix(strings.TrimPrefix(cl.URL, "/v1/operations/"), "/settle")
		if !ok || cl.Status != http.StatusOK {
			continue
		}
		var a answer
		_ = json.Unmarshal(cl.Response, &a)
		op := byID[id]
		acked++
		switch {
		case a.State == "completed" && (op.state != "completed" || a.Result == nil || op.ref != a.Result.Ref):
			lost++
			t.Errorf("%s: a settle was acknowledged completed (%s) but the operation is %s with %q", op.key, cl.Response, op.state, op.ref)
		case (a.State == "unknown_outcome" || a.State == "failed_terminal") && op.state != a.State:
			lost++
			t.Errorf("%s: a settle was acknowledged %s but the operation is %s", op.key, a.State, op.state)
		}
	}
	return acked, lost
}

// fencingTokens: each operation's attempts carry strictly increasing
// tokens; no token was handed out twice for a key; a claim answered before
// another was sent got the smaller token.
func fencingTokens(t *testing.T, db *sql.DB, calls []call, keyOf map[string]string) {
	var bad int
	if err := db.QueryRow(`SELECT count(*) FROM (SELECT lease_token <= lag(lease_token) OVER (PARTITION BY operation_id ORDER BY number) AS down
		FROM attempts) a WHERE down`).Scan(&bad); err != nil || bad != 0 {
		t.Errorf("%d attempts carry a token not above the previous attempt's (%v)", bad, err)
	}
	type grant struct {
		token            int64
		invoke, complete int64
	}
	grants := map[string][]grant{}
	for _, cl := range calls {
		if cl.lost() || cl.Status >= 300 {
			continue
		}
		var a answer
		_ = json.Unmarshal(cl.Response, &a)
		switch {
		case cl.URL == "/v1/operations" && a.Claim != nil:
			grants[keyOf[a.ID]] = append(grants[keyOf[a.ID]], grant{a.Claim.Lease.Token, cl.Invoke, cl.Complete})
		case strings.HasSuffix(cl.URL, "/claim") && a.Lease != nil && a.Operation != nil:
			k := keyOf[a.Operation.ID]
			grants[k] = append(grants[k], grant{a.Lease.Token, cl.Invoke, cl.Complete})
		}
	}
	for key, gs := range grants {
		sort.Slice(gs, func(i, j int) bool { return gs[i].invoke < gs[j].invoke })
		seen := map[int64]bool{}
		for i, g := range gs {
			if seen[g.token] {
				t.Errorf("%s: fencing token %d was handed out twice", key, g.token)
			}
			seen[g.token] = true
			for _, earlier := range gs[:i] {
				if earlier.complete < g.invoke && earlier.token >= g.token {
					t.Errorf("%s: token %d was granted after token %d", key, g.token, earlier.token)
				}
			}
		}
	}
}

// linearizable checks each key's history on its own, with a time limit
// each: a key that is not linearizable is found by exhausting its
// orderings, which calls lost until the end of the run make costly. The
// failing keys are named with their calls, and visualized.
func linearizable(t *testing.T, r *report, history []porcupine.Operation) {
	model := lifecycleModel.ToModel()
	var illegal []porcupine.Operation
	var b strings.Builder
	bad, undecided, unchecked := 0, 0, 0
	budget := time.Now().Add(90 * time.Second)
	for _, part := range model.Partition(history) {
		if bad == 10 || time.Now().After(budget) {
			unchecked++ // enough is known to fail, or the time is up
			continue
		}
		switch porcupine.CheckOperationsTimeout(model, part, 5*time.Second) {
		case porcupine.Ok:
			continue
		case porcupine.Unknown:
			undecided++
			continue
		}
		bad++
		illegal = append(illegal, part...)
		if bad > 3 {
			continue
		}
		fmt.Fprintf(&b, "\n  key %s:", part[0].Input.(input).Key)
		sort.Slice(part, func(i, j int) bool { return part[i].Call < part[j].Call })
		for _, op := range part {
			fmt.Fprintf(&b, "\n    client %2d [%6dms, %6dms] %s", op.ClientId, op.Call/1e6, op.Return/1e6,
				describe(op.Input.(input), op.Output.(output)))
		}
	}
	t.Logf("porcupine: %d calls over %d keys, %d not linearizable, %d undecided, %d not checked",
		len(history), len(model.Partition(history)), bad, undecided, unchecked)
	if bad > 0 {
		t.Errorf("the history is not linearizable for %d keys:%s", bad, b.String())
		_, info := porcupine.CheckOperationsVerbose(model, illegal, 30*time.Second)
		r.visualize = func(path string) error { return porcupine.VisualizePath(model, info, path) }
	}
	if undecided > 0 || (unchecked > 0 && bad == 0) {
		t.Errorf("%d keys' histories were not decided in time, %d not checked", undecided, unchecked)
	} else if unchecked > 0 {
		t.Logf("%d more keys were not checked", unchecked)
	}
}
