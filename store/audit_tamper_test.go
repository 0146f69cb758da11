package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/opshandoff/handoff/audit"
	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/store"
	"github.com/opshandoff/handoff/store/storetest"
)

// auditFixture is a database with a ledger and its audit trail.
type auditFixture struct {
	t     *testing.T
	s     *store.Store
	l     *domain.Ledger
	trail *audit.Trail
}

// trailOf is the ledger's audit trail, its checkpoints written again when
// they give up waiting for another test's transaction (storetest.Checkpoints).
func trailOf(l *domain.Ledger) *audit.Trail {
	trail := audit.OfLedger(l)
	trail.Store = storetest.Checkpoints(trail.Store)
	return trail
}

func newAuditFixture(t *testing.T) *auditFixture {
	s := storetest.New(t)
	l := domain.NewLedger(s, testCards())
	return &auditFixture{t: t, s: s, l: l, trail: trailOf(l)}
}

// lifecycle drives one operation through register, claim, begin and
// settle, each a call of its own: four events, seq 1-4 (the shape a
// registration that claimed also wrote before it wrote one event).
func (x *auditFixture) lifecycle(key string) string {
	x.t.Helper()
	ctx := context.Background()
	res, err := x.l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
		Content: json.RawMessage(`{"title":"Follow up","ref":"` + key + `"}`)})
	if err != nil {
		x.t.Fatal(err)
	}
	id := res.Operation.ID
	c, err := x.l.Workflow.Claim(ctx, wf, id, domain.Claim{Worker: "w1"})
	if err != nil {
		x.t.Fatal(err)
	}
	tok := c.Lease.Token
	if _, err := x.l.Workflow.Begin(ctx, wf, id, domain.Begin{LeaseToken: tok}); err != nil {
		x.t.Fatal(err)
	}
	if _, err := x.l.Workflow.Settle(ctx, wf, id, domain.Settle{LeaseToken: tok, Outcome: domain.OutcomeCompleted,
		Result: &domain.Result{Ref: "crm_" + key}}); err != nil {
		x.t.Fatal(err)
	}
	return id
}

// twoCalls runs the two-call lifecycle: registered, claimed and begun in
// one change and one event, then settled.
func (x *auditFixture) twoCalls(key string) string {
	x.t.Helper()
	ctx := context.Background()
	res, err := x.l.Workflow.Register(ctx, wf, domain.Registration{Key: key, Type: "crm.task.create",
		Content: json.RawMessage(`{"title":"Follow up","ref":"` + key + `"}`), Claim: &domain.Claim{Worker: "w1", Begin: true}})
	if err != nil {
		x.t.Fatal(err)
	}
	if _, err := x.l.Workflow.Settle(ctx, wf, res.Operation.ID, domain.Settle{LeaseToken: res.Claim.Lease.Token,
		Outcome: domain.OutcomeCompleted, Result: &domain.Result{Ref: "crm_" + key}}); err != nil {
		x.t.Fatal(err)
	}
	return res.Operation.ID
}

// checkpoint writes checkpoints until every change is covered.
func (x *auditFixture) checkpoint() {
	x.t.Helper()
	for {
		_, wrote, err := x.trail.Checkpoint(context.Background())
		if err != nil {
			x.t.Fatal(err)
		}
		if !wrote {
			return
		}
	}
}

func (x *auditFixture) system(action string) domain.AuditEvent {
	x.t.Helper()
	e, err := x.s.AppendSystem(context.Background(), domain.SystemEvent(context.Background(), x.l.IDs, x.l.Now(),
		domain.System, action, "", map[string]any{"token_id": "tok_1"}))
	if err != nil {
		x.t.Fatal(err)
	}
	return e
}

func (x *auditFixture) verify() audit.Report {
	x.t.Helper()
	rep, err := x.trail.VerifyDB(context.Background(), &audit.Verifier{})
	if err != nil {
		x.t.Fatal(err)
	}
	return rep
}

func (x *auditFixture) events(stream string) []domain.AuditEvent {
	x.t.Helper()
	evs, err := x.s.Timeline(context.Background(), stream)
	if err != nil {
		x.t.Fatal(err)
	}
	return evs
}

// insert writes an event row as an attacker would.
func (x *auditFixture) insert(e domain.AuditEvent) {
	x.t.Helper()
	store.ExecRaw(x.t, x.s, "INSERT INTO audit_events (id, stream, seq, operation_id, namespace, at, actor_kind, actor_name, "+
		"actor_namespace, action, from_state, to_state, reason, detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
		e.ID, e.Stream, e.Seq, e.OperationID, e.Namespace, e.At.UTC(), e.Actor.Kind.String(), e.Actor.Name, e.Actor.Namespace,
		e.Action, e.FromState, e.ToState, e.Reason, string(e.Detail), e.PrevHash, e.Hash)
}

// forge makes a well-sealed event claiming seq in the stream after prev.
func forge(like domain.AuditEvent, seq int64, prevHash string) domain.AuditEvent {
	e := like
	e.ID, e.Seq, e.PrevHash, e.Reason, e.Detail = "ev_FORGED", seq, prevHash, "all fine", json.RawMessage(`{"forged":true}`)
	e.RequestID, e.ClientAddr = "", ""
	e.Hash = domain.HashEvent(e)
	return e
}

func TestAuditVerify_untouchedTrailVerifies(t *testing.T) {
	x := newAuditFixture(t)
	for i := range 3 {
		x.lifecycle(fmt.Sprintf("evt_%d:task", i))
	}
	x.system("token_created")
	x.checkpoint()
	x.lifecycle("evt_late:task") // after the checkpoint: covered by the chain and the operation's head
	x.twoCalls("evt_fused:task") // two events: the registration with its claim and begin, the settle
	if rep := x.verify(); !rep.OK() || rep.Events != 20 || rep.Streams != 6 || rep.Checkpoints != 1 {
		t.Fatalf("untouched trail: %+v", rep)
	}
}

// TestAuditVerify_tamperedDatabase edits, deletes, reorders and inserts
// rows with SQL, past the append-only guard (AllowTampering: on SQLite the
// triggers are dropped, on PostgreSQL the trigger is disabled by the owner),
// and expects the first break at the event that was touched.
func TestAuditVerify_tamperedDatabase(t *testing.T) {
	type want struct {
		kind    audit.BreakKind
		seq     int64
		eventID string // "" when no event is there to name
	}
	cases := map[string]func(x *auditFixture, op string, evs []domain.AuditEvent) want{
		"edit": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			store.ExecRaw(x.t, x.s, "UPDATE audit_events SET reason = 'nothing happened' WHERE id = ?", evs[1].ID)
			return want{audit.BreakEdited, 2, evs[1].ID}
		},
		"edit and re-seal": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			e := evs[1]
			e.Reason = "nothing happened"
			store.ExecRaw(x.t, x.s, "UPDATE audit_events SET reason = ?, hash = ? WHERE id = ?", e.Reason, domain.HashEvent(e), e.ID)
			return want{audit.BreakReplaced, 2, evs[1].ID}
		},
		"delete": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			store.ExecRaw(x.t, x.s, "DELETE FROM audit_events WHERE id = ?", evs[1].ID)
			return want{audit.BreakDeleted, 2, evs[2].ID}
		},
		"delete and renumber": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			store.ExecRaw(x.t, x.s, "DELETE FROM audit_events WHERE id = ?", evs[1].ID)
			store.ExecRaw(x.t, x.s, "UPDATE audit_events SET seq = seq - 1 WHERE stream = ? AND seq > 2", op)
			return want{audit.BreakDeleted, 2, evs[2].ID}
		},
		"delete the last": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			store.ExecRaw(x.t, x.s, "DELETE FROM audit_events WHERE id = ?", evs[3].ID)
			return want{audit.BreakTruncated, 4, ""}
		},
		"delete the last and rewind the operation": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			store.ExecRaw(x.t, x.s, "DELETE FROM audit_events WHERE id = ?", evs[3].ID)
			store.ExecRaw(x.t, x.s, "UPDATE operations SET version = 3, audit_head = ? WHERE id = ?", evs[2].Hash, op)
			return want{audit.BreakTruncated, 4, ""} // only the checkpoint knows
		},
		"delete the operation with its stream": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			for _, table := range []string{"audit_events WHERE stream", "attempts WHERE operation_id",
				"content_versions WHERE operation_id", "operations WHERE id"} {
				store.ExecRaw(x.t, x.s, "DELETE FROM "+table+" = ?", op)
			}
			return want{audit.BreakMissingStream, 4, ""} // only the checkpoint knows
		},
		"reorder": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			store.ExecRaw(x.t, x.s, "UPDATE audit_events SET seq = 100 WHERE id = ?", evs[1].ID)
			store.ExecRaw(x.t, x.s, "UPDATE audit_events SET seq = 2 WHERE id = ?", evs[2].ID)
			store.ExecRaw(x.t, x.s, "UPDATE audit_events SET seq = 3 WHERE id = ?", evs[1].ID)
			return want{audit.BreakReordered, 2, evs[2].ID}
		},
		"insert": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			store.ExecRaw(x.t, x.s, "UPDATE audit_events SET seq = seq + 1000 WHERE stream = ? AND seq >= 2", op)
			store.ExecRaw(x.t, x.s, "UPDATE audit_events SET seq = seq - 999 WHERE stream = ? AND seq > 1000", op)
			x.insert(forge(evs[1], 2, evs[0].Hash))
			return want{audit.BreakInserted, 2, "ev_FORGED"}
		},
		"append": func(x *auditFixture, op string, evs []domain.AuditEvent) want {
			x.insert(forge(evs[3], 5, evs[3].Hash))
			return want{audit.BreakInserted, 5, "ev_FORGED"}
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			x := newAuditFixture(t)
			x.lifecycle("evt_1:task")
			op := x.lifecycle("evt_2:task")
			x.lifecycle("evt_3:task")
			x.system("token_created")
			x.checkpoint()
			evs := x.events(op)
			if rep := x.verify(); !rep.OK() {
				t.Fatalf("before tampering: %v", rep.Breaks)
			}
			store.AllowTampering(t, x.s)
			w := tamper(x, op, evs)
			rep := x.verify()
			if rep.OK() {
				t.Fatal("the tampered trail verifies")
			}
			b := rep.Breaks[0]
			if b.Kind != w.kind || b.Stream != op || b.Seq != w.seq || b.EventID != w.eventID {
				t.Fatalf("first break %v\nwant %s at %s seq %d event %q (all: %v)", b, w.kind, op, w.seq, w.eventID, rep.Breaks)
			}
		})
	}
}

func TestAuditVerify_tamperedSystemStream(t *testing.T) {
	x := newAuditFixture(t)
	x.lifecycle("evt_1:task")
	tok := x.system("token_created")
	x.system("token_revoked")
	store.AllowTampering(t, x.s)
	store.ExecRaw(t, x.s, "UPDATE audit_events SET detail = ? WHERE id = ?", `{"token_id":"tok_2"}`, tok.ID)
	rep := x.verify()
	if rep.OK() || rep.Breaks[0].Kind != audit.BreakEdited || rep.Breaks[0].EventID != tok.ID {
		t.Fatalf("edited system event: %v", rep.Breaks)
	}
}
