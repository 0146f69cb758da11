package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// The decisions. Each reads its form, calls one Ledger method and redirects
// (303) on success, so a reload never posts twice and no script is needed.
// A refused decision redirects (303) too, to the operation as it is now,
// which shows why it was refused and what the person typed (flash.go).

// takeReason is recorded when someone takes an item with one click.
const takeReason = "took it from the queue"

func (s *server) resolve(c *gin.Context) {
	r := domain.Resolve{Reason: c.PostForm("reason")}
	var errs []domain.FieldError
	r.ExpectedVersion, errs = expectedVersion(c)
	var err error
	if r.Action, err = domain.ParseResolveAction(c.PostForm("action")); err != nil {
		errs = append(errs, domain.FieldError{Field: "action", Message: "must be confirm_executed, confirm_not_executed, retry, cancel or resend_same_key"})
	}
	if then := c.PostForm("then"); then != "" {
		if r.Then, err = domain.ParseResolveAction(then); err != nil {
			errs = append(errs, domain.FieldError{Field: "then", Message: "must be retry or cancel"})
		}
	}
	if ref := strings.TrimSpace(c.PostForm("result_ref")); ref != "" {
		r.Result = &domain.Result{Ref: ref}
	}
	if retries := r.Action == domain.ResolveRetry || r.Then == domain.ResolveRetry; retries && c.PostForm("confirm_risk") == "" {
		if risk := s.retryRiskOf(c); risk != "" {
			errs = append(errs, domain.FieldError{Field: "confirm_risk", Message: "confirm the risk to retry: " + risk})
		}
	}
	s.decide(c, errs, func(ctx context.Context) error {
		_, err := s.ledger.Desk.Resolve(ctx, me(c), c.Param("id"), r)
		return err
	})
}

func (s *server) assign(c *gin.Context) {
	a := domain.Assign{Reason: c.PostForm("reason")}
	var errs []domain.FieldError
	a.ExpectedVersion, errs = expectedVersion(c)
	switch {
	case c.PostForm("take") != "":
		a.To = me(c).Person()
		if a.Reason == "" {
			a.Reason = takeReason
		}
	case a.Reason == "":
		errs = append(errs, domain.FieldError{Field: "reason", Message: "is required, 1-2000 characters"})
	}
	s.decide(c, errs, func(ctx context.Context) error {
		var err error
		if c.PostForm("take") == "" {
			// The person chosen from the list, or typed: someone Handoff knows.
			if a.To, err = s.personFrom(ctx, me(c), strings.TrimSpace(c.PostForm("assignee"))); err != nil {
				return err
			}
		}
		_, err = s.ledger.Desk.Assign(ctx, me(c), c.Param("id"), a)
		return err
	})
}

func (s *server) note(c *gin.Context) {
	n := domain.Note{Text: c.PostForm("text")}
	s.decide(c, nil, func(ctx context.Context) error {
		_, err := s.ledger.Desk.AddNote(ctx, me(c), c.Param("id"), n)
		return err
	})
}

func (s *server) revise(c *gin.Context) {
	r := domain.Revise{Content: json.RawMessage(c.PostForm("content")), Reason: c.PostForm("reason")}
	var errs []domain.FieldError
	r.ExpectedVersion, errs = expectedVersion(c)
	if msg := jsonSyntax(c.PostForm("content")); msg != "" {
		errs = append(errs, domain.FieldError{Field: "content", Message: msg})
	}
	s.decide(c, errs, func(ctx context.Context) error {
		_, err := s.ledger.Desk.Revise(ctx, me(c), c.Param("id"), r)
		return err
	})
}

func (s *server) approve(c *gin.Context) {
	a := domain.Approve{Reason: c.PostForm("reason")}
	var errs []domain.FieldError
	a.ExpectedVersion, errs = expectedVersion(c)
	a.ContentVersion, errs = contentVersion(c, errs)
	s.decide(c, errs, func(ctx context.Context) error {
		_, err := s.ledger.Desk.Approve(ctx, me(c), c.Param("id"), a)
		return err
	})
}

func (s *server) reject(c *gin.Context) {
	r := domain.Reject{Reason: c.PostForm("reason")}
	var errs []domain.FieldError
	r.ExpectedVersion, errs = expectedVersion(c)
	r.ContentVersion, errs = contentVersion(c, errs)
	s.decide(c, errs, func(ctx context.Context) error {
		_, err := s.ledger.Desk.Reject(ctx, me(c), c.Param("id"), r)
		return err
	})
}

// decide runs the decision unless the form was already unreadable, then
// redirects or shows why it was refused.
func (s *server) decide(c *gin.Context, errs []domain.FieldError, call func(context.Context) error) {
	var err error
	if len(errs) > 0 {
		err = domain.Invalid(errs...)
	} else {
		ctx := domain.WithRequestInfo(c.Request.Context(), s.ledger.IDs.New("req"), c.ClientIP())
		err = call(ctx)
	}
	if err == nil {
		s.decided(c)
		return
	}
	s.refused(c, err)
}

// decided returns to where the decision was taken, the item with a flash
// of what was recorded.
func (s *server) decided(c *gin.Context) {
	back := returnTo(c, domain.DeskPath(c.Param("id")))
	if back == domain.DeskPath(c.Param("id")) {
		s.setFlash(c, flash{Op: c.Param("id"), Done: recorded(c)})
		back = pages.ItemURL(c.Param("id"), fromOf(c)) // "next item" keeps the list's filter
	}
	c.Redirect(http.StatusSeeOther, back)
}

// refused returns to the item (or a stale Take's list) with a flash of why
// the decision was refused and what was typed, or shows the item at once
// when there is none or the flash would not fit a cookie.
func (s *server) refused(c *gin.Context, err error) {
	e := domain.AsError(err)
	status := statusOf(e.Code)
	p := s.refusalProblem(c, e, err)
	id := c.Param("id")
	if e.Code == domain.ENotFound {
		// No operation to return to: the refusal is the page.
		s.showOperation(c, status, p, draftOf(c))
		return
	}
	f := flash{Op: id, Status: status, Problem: p, Draft: draftOf(c)}
	if e.Operation != nil {
		f.Key = e.Operation.Key
	}
	// A stale Take goes back to the list it came from, which says why.
	back := pages.ItemURL(id, fromOf(c))
	if c.PostForm("take") != "" && p.Conflict {
		back, f.Take = returnTo(c, "/desk/queue"), true
	}
	if s.setFlash(c, f) {
		c.Redirect(http.StatusSeeOther, back)
		return
	}
	s.showOperation(c, status, p, f.Draft) // too much typed to keep in a cookie: shown here
}

// refusalProblem is what the page says of a refused decision: the fields
// at fault, or the message, and for a conflict what changed meanwhile.
func (s *server) refusalProblem(c *gin.Context, e *domain.Error, err error) pages.Problem {
	p := pages.Problem{Conflict: e.Code == domain.EVersionConflict, Message: s.message(c, err)}
	if p.Fields = fieldLines(e.Fields); len(p.Fields) > 0 {
		p.Message = fieldsMessage(len(p.Fields)) // the fields say what; the message does not repeat them
	}
	if p.Conflict {
		p.Changes = changeSentences(e.Changes, time.Now())
	}
	return p
}

// expectedVersion reads the version of the operation the person saw. It is
// required: without it the Ledger would not check, and a decision taken on
// a stale page could overwrite someone else's.
func expectedVersion(c *gin.Context) (int64, []domain.FieldError) {
	v, err := strconv.ParseInt(c.PostForm("expected_version"), 10, 64)
	if err != nil || v < 1 {
		return 0, []domain.FieldError{{Field: "expected_version", Message: "is required: reload the page and decide again"}}
	}
	return v, nil
}

func contentVersion(c *gin.Context, errs []domain.FieldError) (int, []domain.FieldError) {
	v, err := strconv.Atoi(c.PostForm("content_version"))
	if err != nil || v < 1 {
		return 0, append(errs, domain.FieldError{Field: "content_version", Message: "is required"})
	}
	return v, errs
}

// retryRiskOf is the operation's retry risk, "" when it cannot be read (the
// Ledger then refuses the decision with the reason).
func (s *server) retryRiskOf(c *gin.Context) string {
	op, err := s.ledger.Desk.Get(c.Request.Context(), me(c), c.Param("id"))
	if err != nil {
		return ""
	}
	card, err := s.ledger.Cards.Get(op.Type)
	if err != nil {
		return ""
	}
	return card.RetryRisk(op)
}

// recorded is the success banner's sentence for the decision just taken.
func recorded(c *gin.Context) string {
	switch {
	case strings.HasSuffix(c.Request.URL.Path, "/notes"):
		return "Your note was added."
	case strings.HasSuffix(c.Request.URL.Path, "/lookup"):
		return "Looked up at the provider: the answer is shown below. Nothing was decided."
	case strings.HasSuffix(c.Request.URL.Path, "/assign"):
		return "The assignment was recorded."
	case strings.HasSuffix(c.Request.URL.Path, "/revisions"):
		return "The new content version was recorded; it needs someone else's approval."
	case strings.HasSuffix(c.Request.URL.Path, "/approve"):
		return "Your approval was recorded."
	case strings.HasSuffix(c.Request.URL.Path, "/contradiction"):
		return "The contradiction was recorded: the item is flagged, and the decision that stands is unchanged."
	case strings.HasSuffix(c.Request.URL.Path, "/reject"):
		return "Your rejection was recorded; the operation is cancelled."
	}
	if c.PostForm("action") == domain.ResolveResendSameKey.String() {
		return "Recorded: re-send under the same provider key. A worker will claim it again."
	}
	action := strings.ReplaceAll(c.PostForm("action"), "_", " ")
	if then := c.PostForm("then"); then != "" {
		action += ", then " + then
	}
	return "Recorded: " + action + "."
}

// jsonSyntax says where typed JSON breaks, by line and column; "" when it
// parses.
func jsonSyntax(s string) string {
	var v any
	var se *json.SyntaxError
	if err := json.Unmarshal([]byte(s), &v); !errors.As(err, &se) {
		return ""
	}
	line, col := 1, 1
	for _, r := range s[:min(int(se.Offset), len(s))] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	if se.Offset > 0 && int(se.Offset) <= len(s) && s[se.Offset-1] != '\n' {
		col-- // the offset is just past the offending character
	}
	return fmt.Sprintf("is not valid JSON at line %d, column %d: %s", line, col, se.Error())
}

// fieldLines are a refusal's field errors, one per field: the first said
// about it, which is the one to fix first.
func fieldLines(fs []domain.FieldError) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range fs {
		if !seen[f.Field] {
			seen[f.Field] = true
			out = append(out, f.Field+": "+f.Message)
		}
	}
	return out
}

// fieldsMessage heads the list of fields to correct.
func fieldsMessage(n int) string {
	if n == 1 {
		return "Nothing was recorded: correct this field and submit again."
	}
	return fmt.Sprintf("Nothing was recorded: correct these %d fields and submit again.", n)
}
