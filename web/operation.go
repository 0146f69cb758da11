package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/components"
	"github.com/opshandoff/handoff/views/pages"
)

// operation shows one operation with everything needed to decide on it.
// A decision that was not recorded comes back here with its flash.
func (s *server) operation(c *gin.Context) {
	if f, ok := s.takeFlash(c, func(f flash) bool { return f.Op == c.Param("id") && !f.Take }); ok {
		if f.Done != "" {
			s.showDone(c, f.Done)
			return
		}
		s.showOperation(c, http.StatusOK, f.Problem, f.Draft)
		return
	}
	s.showOperation(c, http.StatusOK, pages.Problem{}, pages.Draft{})
}

// showOperation renders the operation as it is now, with the problem of a
// refused action and what the person typed, if any.
func (s *server) showOperation(c *gin.Context, status int, p pages.Problem, d pages.Draft) {
	it, err := s.ledger.Desk.DeskItem(c.Request.Context(), me(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	v := operationView(it, me(c))
	s.withPeople(c, &v, it.Op)
	s.withChains(c, &v, it.Op)
	v.Twin = s.twinView(c.Request.Context(), me(c), it.Op)
	v.Notifications = s.operationNotifications(c, it.Op.ID)
	v.Frame = s.frameFor(c, it.Op.Key, navOf(fromOf(c)))
	v.Problem, v.Draft, v.From = p, d, fromOf(c)
	v.Kept = keptDecision(it.Op, d, me(c), v.DraftShown())
	page(c, status, pages.Operation(v), pages.OperationBody(v))
}

// showDone is the operation after a decision: the success banner, the next
// item of the queue and the way back to it.
func (s *server) showDone(c *gin.Context, done string) {
	it, err := s.ledger.Desk.DeskItem(c.Request.Context(), me(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	v := operationView(it, me(c))
	s.withPeople(c, &v, it.Op)
	s.withChains(c, &v, it.Op)
	v.Twin = s.twinView(c.Request.Context(), me(c), it.Op)
	v.Frame = s.frameFor(c, it.Op.Key, navOf(fromOf(c)))
	v.Done, v.From = done, fromOf(c)
	next, in := s.nextInList(c, it.Op, v.From)
	// Back scrolls to the item, or, when the decision took it off the
	// list, to the one that took its place.
	v.Back = pages.BackURL(v.From, it.Op.ID)
	if next != "" {
		v.Next = pages.ItemURL(next, v.From)
		if !in {
			v.Back = pages.BackURL(v.From, next)
		}
	}
	page(c, http.StatusOK, pages.Operation(v), pages.OperationBody(v))
}

func operationView(it domain.DeskItem, person domain.Actor) pages.OperationView {
	op := it.Op
	v := pages.OperationView{Op: operationFacts(op), NextDecision: nextDecision(op), Card: cardView(it.Card),
		Retention: retention(it), KeyWindow: keyWindow(it), Actions: allowed(op, it.Card, person, it.Versions, it.Now)}
	if v.Actions.ResendSameKey {
		// The safe decision needs no finding out: say it first.
		v.NextDecision = "Re-send it under the same provider key, which the provider still deduplicates; " +
			"or look the key up at the provider and confirm whether it was executed."
	}
	v.Lookup = lookupPanel(it, person)
	v.ProviderKeyUse = domain.ProviderKeyUse(op, it.Card)
	if op.ProviderKeyFirstSentAt != nil {
		// Nothing to look up at the provider for a key never sent.
		v.LookupLink = it.Card.LookupLink(op.ProviderKey)
	}
	v.Snapshot = pages.Snapshot{Version: op.ContentVersion, SHA256: op.ContentSHA256, Author: op.ContentAuthor,
		Download: snapshotURL(op.ID, op.ContentVersion)}
	v.Snapshot.JSON, v.Snapshot.Truncated = components.BoundedJSON(op.Content, components.ContentBudget)
	v.Snapshot.PurgedAt = op.ContentPurgedAt
	v.Snapshot.Hidden = components.ContentHiddenRunes(op.Content)
	if op.ContentHidden {
		v.Snapshot.HiddenFrom, v.Snapshot.Bytes, v.Snapshot.Hidden = it.Card.ContentVisibleTo.String(), op.ContentBytes, nil
	}
	if a := op.Approval; a != nil && a.ContentVersion == op.ContentVersion {
		v.Snapshot.ApprovedBy, v.Snapshot.ApprovedAt = a.By, &a.At
	}
	for i, cv := range it.Versions {
		row := pages.VersionRow{Version: cv.Version, SHA256: cv.SHA256, Author: cv.CreatedBy, Reason: cv.Reason,
			CreatedAt: cv.CreatedAt, Status: versionStatus(cv), Download: snapshotURL(op.ID, cv.Version)}
		if i > 0 && i >= len(it.Versions)-diffedVersions && op.ContentPurgedAt == nil && !op.ContentHidden {
			row.Diff, row.DiffTruncated = boundedDiff(it.Versions[i-1].Content, cv.Content)
		}
		v.Versions = append(v.Versions, row)
	}
	slices.Reverse(v.Versions)
	for _, a := range it.Attempts {
		row := pages.AttemptRow{Number: a.Number, Worker: a.Worker, Outcome: a.Outcome, ClaimedAt: a.ClaimedAt,
			BeganAt: a.BeganAt, SettledAt: a.SettledAt}
		if a.Error != nil {
			row.Error = errorText(*a.Error)
		}
		v.Attempts = append(v.Attempts, row)
	}
	for _, e := range it.Timeline {
		v.Timeline = append(v.Timeline, eventRow(e))
		if e.Action == "noted" {
			v.Notes = append(v.Notes, eventRow(e))
		}
	}
	v.Contradictions = contradictionRows(domain.Contradictions(it.Timeline))
	for _, r := range it.Related {
		v.Related = append(v.Related, pages.RelatedRow{ID: r.ID, Key: r.Key, Type: r.Type, State: r.State.String()})
	}
	return v
}

// diffedVersions is how many of the newest versions show their changes;
// older ones link to their snapshots, so a long history keeps the page small.
const diffedVersions = 5

// snapshotURL is where a content version downloads as JSON.
func snapshotURL(id string, version int) string {
	return domain.DeskActionPath(id, "content/"+strconv.Itoa(version)+".json")
}

// boundedDiff is the line diff of two contents, within the diff budget.
func boundedDiff(before, after []byte) ([]components.DiffLine, bool) {
	b, _ := components.BoundedJSON(before, components.ContentBudget)
	a, _ := components.BoundedJSON(after, components.ContentBudget)
	return components.BoundedDiff(b, a, components.DiffBudget)
}

// snapshot sends one content version whole, as a JSON file: what the
// bounded renderers leave out.
func (s *server) snapshot(c *gin.Context) {
	n, err := strconv.Atoi(strings.TrimSuffix(c.Param("file"), ".json"))
	if err != nil || !strings.HasSuffix(c.Param("file"), ".json") || n < 1 {
		s.fail(c, domain.Errorf(domain.ENotFound, "no such content version"))
		return
	}
	it, err := s.ledger.Desk.DeskItem(c.Request.Context(), me(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	if it.Op.ContentHidden {
		s.fail(c, domain.Errorf(domain.EForbidden, "the content of %s operations is shown only to %ss and above",
			it.Op.Type, it.Card.ContentVisibleTo))
		return
	}
	if at := it.Op.ContentPurgedAt; at != nil {
		s.fail(c, domain.Errorf(domain.ENotFound, "the content of operation %s was purged on %s", it.Op.ID, at.UTC().Format("2006-01-02")))
		return
	}
	for _, cv := range it.Versions {
		if cv.Version == n {
			c.Header("Cache-Control", "no-store")
			c.Header("Content-Disposition", fmt.Sprintf(`attachment; filename="%s-content-v%d.json"`, it.Op.ID, n))
			c.Data(http.StatusOK, "application/json", cv.Content)
			return
		}
	}
	s.fail(c, domain.Errorf(domain.ENotFound, "operation %s has no content version %d", it.Op.ID, n))
}

func operationFacts(op domain.Operation) pages.OpFacts {
	f := pages.OpFacts{ID: op.ID, Key: op.Key, Namespace: op.Namespace, Type: op.Type, State: op.State.String(),
		EventID: op.EventID, Source: op.Source, CorrelationID: op.CorrelationID, CausedBy: op.CausedBy,
		Supersedes: op.Supersedes, SupersededBy: op.SupersededBy, Fingerprint: op.Fingerprint,
		ProviderKey: op.ProviderKey, Assignee: op.Assignee, Version: op.Version, ContentVersion: op.ContentVersion,
		Attempts: op.Attempts, ProviderKeyFirstSentAt: op.ProviderKeyFirstSentAt, NextRetryAt: op.NextRetryAt,
		CreatedAt: op.CreatedAt, UpdatedAt: op.UpdatedAt}
	if op.LastError != nil {
		f.LastError = errorText(*op.LastError)
	}
	if op.Result != nil {
		f.ResultRef = op.Result.Ref
	}
	if r := op.Resolution; r != nil {
		f.Resolution = fmt.Sprintf("Resolved: %s by %s — “%s”", strings.ReplaceAll(r.Action, "_", " "), r.By, r.Reason)
		if !r.At.IsZero() {
			f.ResolvedAt = &r.At
		}
	}
	if l := op.Lease; l != nil {
		f.Lease = fmt.Sprintf("held by %s until %s", l.Worker, components.UTCText(l.ExpiresAt))
	}
	return f
}

func versionStatus(cv domain.ContentVersion) string {
	switch {
	case cv.ApprovedBy != "":
		return "approved by " + cv.ApprovedBy
	case cv.RejectedBy != "":
		return "rejected by " + cv.RejectedBy
	case cv.Version == 1 && cv.CreatedBy == "":
		return "as registered"
	}
	return "not approved"
}

// eventRow is an audit event as people read it: the person's name with
// their email, a workflow's token name, the system.
func eventRow(e domain.AuditEvent) pages.EventRow {
	actor := e.Actor.Identity()
	if e.Actor.Kind == domain.ActorPerson && e.Actor.Name != "" && e.Actor.Name != actor {
		actor = e.Actor.Name + " <" + actor + ">"
	}
	if e.Actor.Kind == domain.ActorWorkflow {
		actor = "workflow " + actor
	}
	return pages.EventRow{Seq: e.Seq, At: e.At, Actor: actor, ActorKind: e.Actor.Kind.String(), Action: e.Action,
		From: e.FromState, To: e.ToState, Reason: e.Reason, Detail: string(e.Detail), OperationID: e.OperationID, Hash: e.Hash,
		Fields: detailFields(e.Detail)}
}

// retention says whether the provider may still deduplicate a re-send by
// the provider key — the one guarantee that can run out while an item waits.
func retention(it domain.DeskItem) pages.Retention {
	first := it.Op.ProviderKeyFirstSentAt
	until, dedups := it.Card.DedupUntil(first)
	switch {
	case first == nil:
		// Nothing reached the provider: no re-send to warn about.
		return pages.Retention{Text: "The provider key was never sent: the next attempt is its first send."}
	case !dedups:
		return pages.Retention{Text: "The provider does not deduplicate by key: a re-send may do it twice."}
	case it.Now.Before(until):
		return pages.Retention{Known: true, Text: fmt.Sprintf("The provider remembers this key for another %s: "+
			"a re-send with it is deduplicated.", components.Age(until.Sub(it.Now)))}
	}
	return pages.Retention{Known: true, Expired: true, Text: fmt.Sprintf("The provider key left its %s retention window "+
		"%s ago: the provider no longer deduplicates it, so a retry may execute the action twice. Look it up first.",
		it.Card.ProviderKeyRetention, components.Age(it.Now.Sub(until)))}
}

// keyWindow is the countdown to the end of the provider's retention of the
// key, for a card whose provider deduplicates by key; zero otherwise.
func keyWindow(it domain.DeskItem) pages.KeyWindow {
	until, ok := it.Card.DedupUntil(it.Op.ProviderKeyFirstSentAt)
	switch {
	case !ok:
		return pages.KeyWindow{}
	case it.Now.Before(until):
		return pages.KeyWindow{Until: &until, Left: components.Age(until.Sub(it.Now))}
	}
	return pages.KeyWindow{Until: &until, Left: components.Age(it.Now.Sub(until)), Expired: true}
}

// withChains adds the operations this one was caused by and superseded.
func (s *server) withChains(c *gin.Context, v *pages.OperationView, op domain.Operation) {
	v.CausedBy = s.causeChain(c.Request.Context(), me(c), op)
	v.Supersedes = s.supersedesChain(c.Request.Context(), me(c), op)
}

// allowed are the decisions the state and the viewer's role allow; the
// Ledger decides again when the form is posted.
func allowed(op domain.Operation, card domain.Card, person domain.Actor, versions []domain.ContentVersion, now time.Time) pages.Actions {
	a := pages.Actions{Me: personValue(person.Person())}
	if !person.Role.AtLeast(domain.RoleOperator) {
		return a
	}
	a.Note = true
	a.Assign = !op.State.Final()
	a.ConfirmExecuted = op.State == domain.UnknownOutcome
	a.ConfirmNotExecuted = op.State == domain.UnknownOutcome
	if until, ok := card.DedupUntil(op.ProviderKeyFirstSentAt); ok && op.State == domain.UnknownOutcome && now.Before(until) {
		a.ResendSameKey, a.DedupUntil = true, until
	}
	a.Retry = op.State == domain.FailedTerminal
	a.Cancel = op.State == domain.FailedTerminal
	a.Loop = op.Looped()
	a.Revise = slices.Contains([]domain.State{domain.Received, domain.FailedRetryable, domain.FailedTerminal, domain.AwaitingApproval}, op.State)
	a.RetryNeedsApproval = op.Approval == nil && (card.RequiresApproval || op.ContentVersion > 1)
	a.RetryRisk = card.RetryRisk(op)
	a.Approve = op.State == domain.AwaitingApproval && person.Role.AtLeast(domain.RoleApprover)
	current := domain.ContentVersion{CreatedBy: op.ContentAuthor}
	for _, v := range versions {
		if v.Version == op.ContentVersion {
			current = v
		}
	}
	a.OwnRevision = current.RevisedBy(person)
	a.AssignedElsewhere = op.Assignee != "" && !op.AssignedTo(person) &&
		(a.Retry || a.Cancel || a.ConfirmExecuted || a.ResendSameKey || a.Approve)
	return a
}

// withPeople offers the people the item can be assigned to: those who
// signed in with a role that can decide, the viewer and the current
// assignee always among them.
func (s *server) withPeople(c *gin.Context, v *pages.OperationView, op domain.Operation) {
	if !v.Actions.Assign {
		return
	}
	ps, err := s.ledger.Desk.People(c.Request.Context(), me(c), domain.PeopleQuery{Roles: domain.Deciders, Limit: domain.MaxPeople})
	if err != nil {
		s.log.Warn("listing the people to assign to", "err", err)
	}
	v.Actions.People = peopleOptions(ps, me(c), op)
}
