package web

import (
	"context"
	"fmt"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// A decision that turned stale is kept: what the person typed is shown
// beside what was decided meanwhile, and when it says the opposite, an
// operator may record the contradiction (domain/contradiction.go).

// contradict records a kept decision that contradicts the one taken
// meanwhile.
func (s *server) contradict(c *gin.Context) {
	k := domain.Contradict{Reason: c.PostForm("reason")}
	var errs []domain.FieldError
	var err error
	if k.Claim, err = domain.ParseResolveAction(c.PostForm("claim")); err != nil {
		errs = append(errs, domain.FieldError{Field: "claim", Message: "must be confirm_executed or confirm_not_executed"})
	}
	if then := c.PostForm("then"); then != "" {
		if k.Then, err = domain.ParseResolveAction(then); err != nil {
			errs = append(errs, domain.FieldError{Field: "then", Message: "must be retry or cancel"})
		}
	}
	if ref := strings.TrimSpace(c.PostForm("result_ref")); ref != "" {
		k.Result = &domain.Result{Ref: ref}
	}
	s.decide(c, errs, func(ctx context.Context) error {
		_, err := s.ledger.Desk.RecordContradiction(ctx, me(c), c.Param("id"), k)
		return err
	})
}

// claimOf is what a form's draft claims about the provider: executed or
// not; ok is false for a form that claims neither. The contradiction form
// carries the kept decision again, which claimed execution when it holds
// a reference.
func claimOf(d pages.Draft) (claim domain.ResolveAction, ok bool) {
	switch d.Form {
	case "confirm-executed":
		return domain.ResolveConfirmExecuted, true
	case "confirm-not-executed":
		return domain.ResolveConfirmNotExecuted, true
	case "contradiction":
		if d.Ref != "" {
			return domain.ResolveConfirmExecuted, true
		}
		return domain.ResolveConfirmNotExecuted, true
	}
	return domain.ResolveAction{}, false
}

// keptDecision is the refused decision d, kept when the page no longer
// offers its form; nil otherwise.
func keptDecision(op domain.Operation, d pages.Draft, person domain.Actor, shown bool) *pages.KeptDecision {
	claim, ok := claimOf(d)
	if !ok || shown {
		return nil
	}
	k := &pages.KeptDecision{Form: d.Form, Claim: claim.String(), Then: d.Then, Ref: d.Ref, Reason: d.Reason}
	if claim == domain.ResolveConfirmExecuted {
		k.Label = "confirmed it was executed, with the provider's reference " + d.Ref
	} else {
		k.Label = "confirmed it was not executed"
		if d.Then != "" {
			k.Label += ", then " + d.Then
		}
	}
	if r := op.Resolution; r != nil {
		k.Meanwhile = fmt.Sprintf("This item was %s by %s", resolvedAs(r.Action), r.By)
		if !r.At.IsZero() {
			at := r.At
			k.MeanwhileAt = &at
		}
		if r.Reason != "" {
			k.Meanwhile += " — “" + r.Reason + "”"
		}
	} else {
		k.Meanwhile = "This item is now " + strings.ReplaceAll(op.State.String(), "_", " ")
	}
	k.Contradicts = domain.Contradicts(claim, op.Resolution)
	k.Record = k.Contradicts && person.Role.AtLeast(domain.RoleOperator)
	return k
}

// resolvedAs says a resolution's action as a past participle.
func resolvedAs(action string) string {
	switch action {
	case "confirm_not_executed+cancel":
		return "cancelled as not executed"
	case "confirm_not_executed+retry":
		return "confirmed not executed and sent again"
	case "confirm_executed":
		return "confirmed executed"
	}
	return "resolved (" + strings.ReplaceAll(action, "_", " ") + ")"
}

func contradictionRows(cs []domain.Contradiction) []pages.ContradictionRow {
	var out []pages.ContradictionRow
	for _, c := range cs {
		row := pages.ContradictionRow{By: c.By, Reason: c.Reason, At: c.At,
			Claim: strings.ReplaceAll(c.Claim, "_", " "), Contradicts: resolvedAs(c.Contradicts) + " by " + c.ContradictsBy}
		if c.ResultRef != "" {
			row.Claim += " (reference " + c.ResultRef + ")"
		}
		out = append(out, row)
	}
	return out
}
