package api

import (
	"context"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/opshandoff/handoff/domain"
)

// The human actions. The domain refuses workflows and too-low roles and
// validates reasons; here the wire shapes are read. expected_version is
// required where a stale view could overwrite another person's decision;
// notes and approvals (which name their content version) may omit it.

type resolveRequest struct {
	Action          string      `json:"action" schema:"required,enum=resolve_actions" doc:"resend_same_key re-sends an unknown_outcome under the same provider key, only while the card's provider deduplicates by key and the key is inside provider_key_retention"`
	Then            string      `json:"then" schema:"enum=then_actions" doc:"after confirm_not_executed"`
	Result          *resultJSON `json:"result" doc:"the provider's reference, with confirm_executed"`
	Reason          string      `json:"reason" schema:"required,minlen=1,maxlen=2000"`
	ExpectedVersion *int64      `json:"expected_version" schema:"required,min=1"`
}

func parseResolve(data []byte) (domain.Resolve, error) {
	var req resolveRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Resolve{}, err
	}
	var errs fieldErrs
	r := domain.Resolve{Reason: req.Reason, Result: parseResult(&errs, "result", req.Result),
		ExpectedVersion: expectedVersion(&errs, req.ExpectedVersion, true)}
	var err error
	if r.Action, err = domain.ParseResolveAction(req.Action); err != nil {
		errs.add("action", "must be one of %s", strings.Join(enumValues["resolve_actions"], ", "))
	}
	if req.Then != "" {
		if r.Then, err = domain.ParseResolveAction(req.Then); err != nil || (r.Then != domain.ResolveRetry && r.Then != domain.ResolveCancel) {
			errs.add("then", "must be retry or cancel")
		}
	}
	return r, errs.err()
}

// expectedVersion reads expected_version; 0 tells the domain not to check.
func expectedVersion(errs *fieldErrs, v *int64, required bool) int64 {
	switch {
	case v == nil && required:
		errs.add("expected_version", "is required: the version of the operation you saw")
	case v == nil:
	case *v < 1:
		errs.add("expected_version", "must be at least 1")
	default:
		return *v
	}
	return 0
}

type assignRequest struct {
	Assignee        json.RawMessage `json:"assignee" schema:"required,nullable,string,maxlen=255" doc:"the email (or, without one, the subject) of someone who signed in to the desk with a role that can decide; null to unassign"`
	Reason          string          `json:"reason" schema:"maxlen=2000"`
	ExpectedVersion *int64          `json:"expected_version" schema:"required,min=1"`
}

// assignBody is an assign request as read: the decision, and the identity
// it names, which the Ledger resolves to a person (assignTo).
type assignBody struct {
	domain.Assign
	Assignee string // "" unassigns
}

func parseAssign(data []byte) (assignBody, error) {
	var req assignRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return assignBody{}, err
	}
	var errs fieldErrs
	a := assignBody{Assign: domain.Assign{Reason: req.Reason, ExpectedVersion: expectedVersion(&errs, req.ExpectedVersion, true)}}
	switch {
	case len(req.Assignee) == 0:
		errs.add("assignee", "is required; null unassigns")
	case !isNull(req.Assignee):
		a.Assignee = assigneeText(&errs, "assignee", req.Assignee)
	}
	return a, errs.err()
}

// assigneeText reads a non-null assignee: an identity, at most 255
// characters.
func assigneeText(errs *fieldErrs, field string, raw json.RawMessage) string {
	var s string
	switch {
	case json.Unmarshal(raw, &s) != nil || s == "":
		errs.add(field, "must be a non-empty string or null")
	case utf8.RuneCountInString(s) > 255:
		errs.add(field, "must be at most 255 characters")
	}
	return s
}

// assignTo resolves the identity the request names to the one person who
// signed in with it and can decide — unknown, not a decider, or shared by
// people at two identity providers is a 400 on assignee — and assigns.
func assignTo(l *domain.Desk, ctx context.Context, actor domain.Actor, id string, a assignBody) (domain.Operation, error) {
	var err error
	if a.To, err = l.Assignee(ctx, actor, a.Assignee); err != nil {
		return domain.Operation{}, err
	}
	return l.Assign(ctx, actor, id, a.Assign)
}

type noteRequest struct {
	Text            string `json:"text" schema:"required,minlen=1,maxlen=2000"`
	ExpectedVersion *int64 `json:"expected_version" schema:"min=1"`
}

func parseNote(data []byte) (domain.Note, error) {
	var req noteRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Note{}, err
	}
	var errs fieldErrs
	n := domain.Note{Text: req.Text, ExpectedVersion: expectedVersion(&errs, req.ExpectedVersion, false)}
	return n, errs.err()
}

type reviseRequest struct {
	Content         json.RawMessage `json:"content" schema:"required,object"`
	Reason          string          `json:"reason" schema:"required,minlen=1,maxlen=2000"`
	ExpectedVersion *int64          `json:"expected_version" schema:"required,min=1"`
}

func parseRevise(data []byte) (domain.Revise, error) {
	var req reviseRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Revise{}, err
	}
	var errs fieldErrs
	if len(object(req.Content)) == 0 {
		errs.add("content", "is required: a JSON object")
	}
	r := domain.Revise{Content: req.Content, Reason: req.Reason,
		ExpectedVersion: expectedVersion(&errs, req.ExpectedVersion, true)}
	return r, errs.err()
}

// decisionRequest is approve and reject: the content version decided on.
type decisionRequest struct {
	ContentVersion  *int   `json:"content_version" schema:"required,min=1"`
	Reason          string `json:"reason" schema:"required,minlen=1,maxlen=2000"`
	ExpectedVersion *int64 `json:"expected_version" schema:"min=1"`
}

func (req decisionRequest) parse(errs *fieldErrs, versionRequired bool) (int, int64) {
	if req.ContentVersion == nil || *req.ContentVersion < 1 {
		errs.add("content_version", "is required: the content version you decide on")
	}
	v := expectedVersion(errs, req.ExpectedVersion, versionRequired)
	if req.ContentVersion == nil {
		return 0, v
	}
	return *req.ContentVersion, v
}

func parseApprove(data []byte) (domain.Approve, error) {
	var req decisionRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Approve{}, err
	}
	var errs fieldErrs
	cv, ev := req.parse(&errs, false)
	return domain.Approve{ContentVersion: cv, Reason: req.Reason, ExpectedVersion: ev}, errs.err()
}

func parseReject(data []byte) (domain.Reject, error) {
	var req decisionRequest
	if err := unmarshalStrict(data, &req); err != nil {
		return domain.Reject{}, err
	}
	var errs fieldErrs
	cv, ev := req.parse(&errs, false)
	return domain.Reject{ContentVersion: cv, Reason: req.Reason, ExpectedVersion: ev}, errs.err()
}
