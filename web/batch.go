package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/views/pages"
)

// Bulk decisions: one decision previewed, then applied, for many items
// (domain/batch.go) — selected in the queue, matching a filter, or an
// incident's open items (incidents.go).

// batchDecisions are the bulk form's choices as domain batches.
var batchDecisions = map[string]struct {
	batch domain.Batch
	words string
}{
	"retry":               {domain.Batch{Kind: domain.BatchResolve, Action: domain.ResolveRetry}, "retry"},
	"cancel":              {domain.Batch{Kind: domain.BatchResolve, Action: domain.ResolveCancel}, "cancel"},
	"not_executed_retry":  {domain.Batch{Kind: domain.BatchResolve, Action: domain.ResolveConfirmNotExecuted, Then: domain.ResolveRetry}, "confirm not executed, then retry"},
	"not_executed_cancel": {domain.Batch{Kind: domain.BatchResolve, Action: domain.ResolveConfirmNotExecuted, Then: domain.ResolveCancel}, "confirm not executed, then cancel"},
	"resend_same_key":     {domain.Batch{Kind: domain.BatchResolve, Action: domain.ResolveResendSameKey}, "re-send under the same provider key"},
	"assign":              {domain.Batch{Kind: domain.BatchAssign}, "assign"},
	"note":                {domain.Batch{Kind: domain.BatchNote}, "add a note"},
}

// batchForm reads the decision the bulk form chose.
func (s *server) batchForm(c *gin.Context) (domain.Batch, pages.BatchFields, string, error) {
	fields := pages.BatchFields{Decision: c.PostForm("decision"), Assignee: strings.TrimSpace(c.PostForm("assignee")),
		Reason: c.PostForm("reason")}
	d, ok := batchDecisions[fields.Decision]
	if !ok {
		return domain.Batch{}, fields, "", domain.Invalid(domain.FieldError{Field: "decision", Message: "choose one of the decisions offered"})
	}
	b := d.batch
	b.Reason = fields.Reason
	if b.Kind == domain.BatchAssign {
		var err error
		if b.Assignee, err = s.personFrom(c.Request.Context(), me(c), fields.Assignee); err != nil {
			return domain.Batch{}, fields, "", err
		}
		// The confirmation posts the person back by (issuer, subject).
		fields.Assignee = personValue(b.Assignee)
	}
	return b, fields, batchWords(b), nil
}

// parseItems reads "id:version" values, the version each item was seen at.
func parseItems(vals []string) ([]domain.BatchItem, error) {
	items := make([]domain.BatchItem, 0, len(vals))
	for _, v := range vals {
		id, ver, ok := strings.Cut(v, ":")
		n, err := strconv.ParseInt(ver, 10, 64)
		if !ok || err != nil || id == "" || n < 1 {
			return nil, domain.Invalid(domain.FieldError{Field: "item", Message: "an item is not id:version; reload the queue and select again"})
		}
		items = append(items, domain.BatchItem{ID: id, ExpectedVersion: n})
	}
	return items, nil
}

// matching lists every item the posted filter matches, at its current
// version, up to a batch's limit, the oldest first, and how many it
// matches in all: more than the items when the filter matches more than
// one batch may take.
func (s *server) matching(c *gin.Context) ([]domain.BatchItem, pages.QueueFilter, int, error) {
	f := filterFrom(c.PostForm, "assignee_filter")
	// The list's order is no part of what a bulk decision takes: the
	// oldest items first, up to a batch, whatever order the page shows.
	f.Sort = ""
	q, err := queueQuery(f, me(c), "", time.Now())
	if err != nil {
		return nil, f, 0, err
	}
	q.Limit = domain.MaxBatch
	ops, next, err := s.ledger.Desk.DeskQueue(c.Request.Context(), me(c), q, f.Provider)
	if err != nil {
		return nil, f, 0, err
	}
	n := len(ops)
	if next != "" {
		if n, err = s.ledger.Desk.DeskQueueCount(c.Request.Context(), me(c), q, f.Provider, 0); err != nil {
			return nil, f, 0, err
		}
	}
	if n == 0 {
		return nil, f, 0, domain.Invalid(domain.FieldError{Field: "all", Message: "nothing matches this filter any more"})
	}
	items := make([]domain.BatchItem, len(ops))
	for i, op := range ops {
		items[i] = domain.BatchItem{ID: op.ID, ExpectedVersion: op.Version}
	}
	return items, f, max(n, len(items)), nil
}

// batchPreview shows what the decision would do to each item; nothing is
// recorded.
func (s *server) batchPreview(c *gin.Context) {
	var items []domain.BatchItem
	var f pages.QueueFilter
	var matching int
	var err error
	if c.PostForm("all") != "" {
		items, f, matching, err = s.matching(c)
	} else {
		items, err = parseItems(c.PostFormArray("item"))
	}
	b, fields, words, ferr := s.batchForm(c)
	err = bothInvalid(err, ferr)
	v := pages.BatchView{Frame: s.frameFor(c, "Preview", "queue"), Preview: true, Decision: words, Fields: fields,
		Back: returnTo(c, queueURL(f, "")), Matching: matching}
	if err == nil {
		b.Items, b.Preview = items, true
		if _, err = s.showBatch(c, &v, b); err == nil {
			s.withSummaries(c, &v)
		}
	}
	if err != nil {
		v.Problem = s.problemLine(c, err)
		page(c, statusOf(domain.ErrorCode(err)), pages.Batch(v), pages.Batch(v))
		return
	}
	page(c, http.StatusOK, pages.Batch(v), pages.Batch(v))
}

// batchApply decides each previewed item at the version the preview showed.
func (s *server) batchApply(c *gin.Context) {
	items, err := parseItems(c.PostFormArray("item"))
	b, fields, words, ferr := s.batchForm(c)
	err = bothInvalid(err, ferr)
	v := pages.BatchView{Frame: s.frameFor(c, "Done", "queue"), Decision: words, Fields: fields,
		Back: returnTo(c, "/desk/queue")}
	var res domain.BatchResult
	if err == nil {
		b.Items, b.RiskConfirmed = items, c.PostForm("confirm_risk") != ""
		ctx := domain.WithRequestInfo(c.Request.Context(), s.ledger.IDs.New("req"), c.ClientIP())
		c.Request = c.Request.WithContext(ctx)
		res, err = s.showBatch(c, &v, b)
	}
	if err != nil {
		v.Problem = s.problemLine(c, err)
		page(c, statusOf(domain.ErrorCode(err)), pages.Batch(v), pages.Batch(v))
		return
	}
	if !res.Kept {
		// The decisions stand, but there is no page to send the person
		// to: show the result here, once.
		if res.KeepError != nil {
			s.log.ErrorContext(c.Request.Context(), "batch result not kept", "batch_id", res.ID, "err", res.KeepError)
		}
		page(c, http.StatusOK, pages.Batch(v), pages.Batch(v))
		return
	}
	c.Redirect(http.StatusSeeOther, "/desk/batch/"+res.ID)
}

// showBatch runs the batch and fills the view with its result.
func (s *server) showBatch(c *gin.Context, v *pages.BatchView, b domain.Batch) (domain.BatchResult, error) {
	res, err := s.ledger.Bulk.Batch(c.Request.Context(), me(c), b)
	if err != nil {
		return res, err
	}
	fillBatch(v, b, res)
	return res, nil
}

// fillBatch shows a batch's result: each item, at the version it was
// decided on, and the counts.
func fillBatch(v *pages.BatchView, b domain.Batch, res domain.BatchResult) {
	v.ID, v.Applied, v.Skipped = res.ID, res.Applied, res.Skipped
	for _, r := range res.Items {
		if r.Outcome == domain.BatchSkipped && r.Code == domain.EInternal {
			v.Failed++ // not refused: something broke
			v.Skipped--
		}
	}
	seen := map[string]int64{}
	for _, it := range b.Items {
		seen[it.ID] = it.ExpectedVersion
	}
	for _, r := range res.Items {
		row := pages.BatchRow{ID: r.ID, Key: r.Key, Outcome: r.Outcome, Why: r.Why, Risk: r.Risk, Version: seen[r.ID]}
		v.Risky = v.Risky || (r.Risk != "" && r.Outcome == domain.BatchWouldApply)
		if r.From != (domain.State{}) {
			row.From = r.From.String()
		}
		if r.To != (domain.State{}) && r.Outcome != domain.BatchSkipped {
			row.To = r.To.String()
		}
		v.Items = append(v.Items, row)
	}
}

// withSummaries adds the card's summary fields to a batch's rows: eleven
// keys that look alike are told apart by amount and customer.
func (s *server) withSummaries(c *gin.Context, v *pages.BatchView) {
	ids := make([]string, len(v.Items))
	for i, r := range v.Items {
		ids[i] = r.ID
	}
	sums := s.summaries(c, ids)
	for i := range v.Items {
		v.Items[i].Summary = sums[v.Items[i].ID]
	}
}

// batchWords says a kept batch's decision as the bulk form offered it.
func batchWords(b domain.Batch) string {
	if b.Kind == domain.BatchAssign {
		return "assign to " + orDefault(b.Assignee.Identity(), "nobody")
	}
	for _, d := range batchDecisions {
		if d.batch.Kind == b.Kind && d.batch.Action == b.Action && d.batch.Then == b.Then {
			return d.words
		}
	}
	return string(b.Kind)
}

// bothInvalid is the first error, with the second's fields when both are
// about fields, so the person corrects every field at once.
func bothInvalid(first, second error) error {
	if first == nil {
		return second
	}
	a, b := domain.AsError(first), domain.AsError(second)
	if second == nil || a.Code != domain.EInvalid || b.Code != domain.EInvalid {
		return first
	}
	return domain.Invalid(append(a.Fields, b.Fields...)...)
}

// problemLine is a refusal in one line: each field once, or the message.
func (s *server) problemLine(c *gin.Context, err error) string {
	lines := fieldLines(domain.AsError(err).Fields)
	if len(lines) < 2 {
		return s.message(c, err)
	}
	return "Nothing was recorded: " + strings.Join(lines, "; ") + "."
}
