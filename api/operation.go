package api

import (
	"encoding/json"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// operationJSON is "The operation" of API.md. Optional members are pointers
// so that absence is rendered as null, never as "" or a zero time.
type operationJSON struct {
	ID                     string          `json:"id"`
	Namespace              string          `json:"namespace"`
	Key                    string          `json:"key"`
	Type                   string          `json:"type"`
	State                  string          `json:"state" schema:"enum=states"`
	Version                int64           `json:"version"`
	EventID                *string         `json:"event_id"`
	Source                 *string         `json:"source"`
	CorrelationID          *string         `json:"correlation_id"`
	CausedBy               *string         `json:"caused_by" doc:"key of the operation whose side effect triggered this one"`
	Supersedes             *string         `json:"supersedes"`
	SupersededBy           *string         `json:"superseded_by"`
	Fingerprint            string          `json:"fingerprint"`
	ContentVersion         int             `json:"content_version"`
	ContentSHA256          string          `json:"content_sha256"`
	Content                json.RawMessage `json:"content,omitempty" schema:"object" doc:"only in GET /v1/operations/{id}"`
	ContentHidden          bool            `json:"content_hidden,omitempty" doc:"the card's content_visible_to keeps the content and result data from this reader"`
	ContentBytes           int             `json:"content_bytes,omitempty" doc:"the content's size, when it is hidden"`
	ContentPurgedAt        *time.Time      `json:"content_purged_at,omitempty" doc:"when content retention purged the content and result data; the hashes and the result ref stay"`
	Approval               *approvalJSON   `json:"approval"`
	ProviderKey            *string         `json:"provider_key"`
	ProviderKeyFirstSentAt *time.Time      `json:"provider_key_first_sent_at"`
	// ProviderKeyContentVersion is the content version the provider key was
	// first sent with.
	ProviderKeyContentVersion *int            `json:"provider_key_content_version" doc:"the content version the provider key was first sent with; null while it was not sent"`
	Attempts                  int             `json:"attempts"`
	Lease                     *leaseJSON      `json:"lease" doc:"the live lease, never its token"`
	NextRetryAt               *time.Time      `json:"next_retry_at"`
	Result                    *resultJSON     `json:"result"`
	LastError                 *errorJSON      `json:"last_error"`
	Assignee                  *string         `json:"assignee"`
	Resolution                *resolutionJSON `json:"resolution"`
	CreatedAt                 time.Time       `json:"created_at"`
	UpdatedAt                 time.Time       `json:"updated_at"`
	Links                     linksJSON       `json:"links"`
}

type approvalJSON struct {
	ContentVersion int       `json:"content_version"`
	By             string    `json:"by"`
	At             time.Time `json:"at"`
}

type leaseJSON struct {
	Worker    string    `json:"worker"`
	ExpiresAt time.Time `json:"expires_at"`
}

type resultJSON struct {
	Ref  string          `json:"ref" schema:"required,minlen=1,maxlen=1000"`
	Data json.RawMessage `json:"data" doc:"whatever the provider returned that later readers need"`
}

type errorJSON struct {
	Class   string `json:"class" schema:"enum=classes"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

type resolutionJSON struct {
	Action string    `json:"action"`
	By     string    `json:"by"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

type linksJSON struct {
	Self string `json:"self"`
	Desk string `json:"desk"`
}

// toOperation converts an operation; content is included only where API.md
// says so (GET one), since lists would otherwise carry up to 64 KiB per item.
func toOperation(op domain.Operation, withContent bool) *operationJSON {
	o := &operationJSON{
		ID: op.ID, Namespace: op.Namespace, Key: op.Key, Type: op.Type, State: op.State.String(),
		Version: op.Version, EventID: nullIfEmpty(op.EventID), Source: nullIfEmpty(op.Source), CorrelationID: nullIfEmpty(op.CorrelationID),
		CausedBy: nullIfEmpty(op.CausedBy), Supersedes: nullIfEmpty(op.Supersedes), SupersededBy: nullIfEmpty(op.SupersededBy),
		Fingerprint: op.Fingerprint, ContentVersion: op.ContentVersion, ContentSHA256: op.ContentSHA256,
		ProviderKey: nullIfEmpty(op.ProviderKey), ProviderKeyFirstSentAt: utcOrNil(op.ProviderKeyFirstSentAt),
		ProviderKeyContentVersion: sentVersion(op),
		Attempts:                  op.Attempts, NextRetryAt: utcOrNil(op.NextRetryAt), Result: toResult(op.Result),
		Assignee: nullIfEmpty(op.Assignee), CreatedAt: op.CreatedAt.UTC(), UpdatedAt: op.UpdatedAt.UTC(),
		Links: linksJSON{Self: "/v1/operations/" + op.ID, Desk: domain.DeskPath(op.ID)},
	}
	if withContent {
		o.Content = op.Content // empty once purged: omitted
	}
	o.ContentPurgedAt = utcOrNil(op.ContentPurgedAt)
	o.ContentHidden, o.ContentBytes = op.ContentHidden, op.ContentBytes
	if a := op.Approval; a != nil {
		o.Approval = &approvalJSON{ContentVersion: a.ContentVersion, By: a.By, At: a.At.UTC()}
	}
	if l := op.Lease; l != nil {
		o.Lease = &leaseJSON{Worker: l.Worker, ExpiresAt: l.ExpiresAt.UTC()}
	}
	o.LastError = toErrorJSON(op.LastError)
	if r := op.Resolution; r != nil {
		o.Resolution = &resolutionJSON{Action: r.Action, By: r.By, Reason: r.Reason, At: r.At.UTC()}
	}
	return o
}

func toResult(r *domain.Result) *resultJSON {
	if r == nil {
		return nil
	}
	return &resultJSON{Ref: r.Ref, Data: object(r.Data)}
}

func toErrorJSON(e *domain.ErrorInfo) *errorJSON {
	if e == nil {
		return nil
	}
	return &errorJSON{Class: e.Class.String(), Code: e.Code, Message: e.Message}
}

func toOperations(ops []domain.Operation) []*operationJSON {
	out := make([]*operationJSON, 0, len(ops))
	for _, op := range ops {
		out = append(out, toOperation(op, false))
	}
	return out
}

// nullIfEmpty renders "" as null.
func nullIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// utcOrNil is t in UTC, or nil.
func utcOrNil(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

type operationList struct {
	Items      []*operationJSON `json:"items" schema:"required"`
	NextCursor *string          `json:"next_cursor" doc:"null on the last page"`
}

func (s *server) getOperation(c *gin.Context) {
	op, err := s.ledger.Workflow.Get(c.Request.Context(), actorOf(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, 200, toOperation(op, true))
}

func (s *server) listOperations(c *gin.Context) {
	q, err := parseListQuery(c.Request.URL.RawQuery, s.now())
	if err != nil {
		s.fail(c, err)
		return
	}
	ops, next, err := s.ledger.Workflow.List(c.Request.Context(), actorOf(c), q.ListQuery, q.provider)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, 200, operationList{Items: toOperations(ops), NextCursor: nullIfEmpty(next)})
}

// sentVersion is the content version the provider key was first sent
// with, nil while it was not sent (or was sent before that was recorded).
func sentVersion(op domain.Operation) *int {
	if op.ProviderKeyFirstSentAt == nil || op.ProviderKeySentVersion == 0 {
		return nil
	}
	v := op.ProviderKeySentVersion
	return &v
}
