package domain

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// A contradiction is a person's decision that came too late to be taken
// and that says the opposite of the decision that was: "executed, here is
// the provider's reference" after someone else confirmed it was not, or
// the reverse. Completed and cancelled are final, so the later decision
// does not change the state; it is recorded beside the first one, audited,
// and the item is flagged until a person looks into it. Nothing resolves
// the disagreement silently, and the evidence the person held (the
// reference) is kept in the audit trail.

// ActionContradictionRecorded is the audit action of a recorded
// contradiction.
const ActionContradictionRecorded = "contradiction_recorded"

// Contradict records a decision that contradicts the operation's current
// resolution.
type Contradict struct {
	Claim  ResolveAction // what the person found: confirm_executed or confirm_not_executed
	Then   ResolveAction // with confirm_not_executed: what they would have done next
	Result *Result       // with confirm_executed: the provider's reference they hold
	Reason string
}

func (Contradict) name() string { return "contradict" }

// Contradicts reports whether a decision claim says the opposite of the
// resolution r a person recorded: executed against not executed, or the
// reverse.
func Contradicts(claim ResolveAction, r *Resolution) bool {
	if r == nil {
		return false
	}
	done := strings.SplitN(r.Action, "+", 2)[0]
	switch claim {
	case ResolveConfirmExecuted:
		return done == ResolveConfirmNotExecuted.String()
	case ResolveConfirmNotExecuted:
		return done == ResolveConfirmExecuted.String()
	}
	return false
}

// RecordContradiction records a person's decision that contradicts the
// one taken before it. It needs an operator, a reason, and for a claim of
// execution the provider's reference.
func (l *Desk) RecordContradiction(ctx context.Context, actor Actor, id string, c Contradict) (Operation, error) {
	errs := validReason("reason", c.Reason)
	errs = append(errs, checkResult(c.Result)...)
	switch c.Claim {
	case ResolveConfirmExecuted:
		if c.Result == nil || c.Result.Ref == "" {
			errs = append(errs, FieldError{"result.ref", "the provider's reference is required to say it was executed"})
		}
	case ResolveConfirmNotExecuted:
	default:
		errs = append(errs, FieldError{"claim", "must be confirm_executed or confirm_not_executed"})
	}
	return l.decideAsPerson(ctx, actor, RoleOperator, id, c, errs)
}

func decideContradict(op Operation, c Contradict, env Env) (Change, error) {
	if !Contradicts(c.Claim, op.Resolution) {
		return Change{}, Errorf(EInvalidTransition, "%s does not contradict the decision recorded on this operation", c.Claim)
	}
	ch := begin(op, env, op.State, ActionContradictionRecorded)
	ch.Events[0].Reason = c.Reason
	r := op.Resolution
	d := map[string]any{"claim": c.Claim.String(), "contradicts": r.Action, "contradicts_by": r.By,
		"contradicts_at": r.At.UTC()}
	if c.Then != (ResolveAction{}) {
		d["then"] = c.Then.String()
	}
	if c.Result != nil {
		d["result_ref"] = c.Result.Ref
	}
	ch.Events[0].Detail = detail(d)
	return ch, nil
}

// Contradiction is one recorded contradiction, read back from the
// timeline.
type Contradiction struct {
	By, Reason string
	At         time.Time
	Claim      string // confirm_executed or confirm_not_executed
	Then       string
	ResultRef  string
	// Contradicts is the decision it contradicts, as recorded then.
	Contradicts, ContradictsBy string
	ContradictsAt              time.Time
}

// Contradictions are the contradictions recorded on an operation, oldest
// first: an item with any is flagged.
func Contradictions(timeline []AuditEvent) []Contradiction {
	var out []Contradiction
	for _, ev := range timeline {
		if ev.Action != ActionContradictionRecorded {
			continue
		}
		var d struct {
			Claim         string    `json:"claim"`
			Then          string    `json:"then"`
			ResultRef     string    `json:"result_ref"`
			Contradicts   string    `json:"contradicts"`
			ContradictsBy string    `json:"contradicts_by"`
			ContradictsAt time.Time `json:"contradicts_at"`
		}
		_ = json.Unmarshal(ev.Detail, &d) // an unreadable detail still flags the item
		out = append(out, Contradiction{By: ev.Actor.Identity(), Reason: ev.Reason, At: ev.At, Claim: d.Claim,
			Then: d.Then, ResultRef: d.ResultRef, Contradicts: d.Contradicts, ContradictsBy: d.ContradictsBy,
			ContradictsAt: d.ContradictsAt})
	}
	return out
}
