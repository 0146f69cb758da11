package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// Executor is what POST /v1/execute/{type} needs: the execute package's
// Executor.
type Executor interface {
	Start(ctx context.Context, actor domain.Actor, typ string, in domain.ExecuteInput) (domain.ExecuteRun, error)
}

// executeBody is the request of POST /v1/execute/{type}: the content, or
// the JSON the card's execute_endpoint reads the key and content from.
type executeBody map[string]any

// execute is POST /v1/execute/{type}: Handoff registers the operation
// under the key, makes the card's call as its own worker and answers with
// the operation once it is settled, or 202 once the wait is over.
func (s *server) execute(c *gin.Context) {
	card, body, actor, err := s.executeRequest(c)
	var in domain.ExecuteInput
	if err == nil {
		in, err = card.ExecuteEndpoint.ReadExecuteRequest(body, c.GetHeader("Idempotency-Key"))
	}
	var run domain.ExecuteRun
	if err == nil {
		ctx := domain.WithRequestInfo(c.Request.Context(), requestID(c), c.ClientIP())
		run, err = s.executor.Start(ctx, actor, card.Name, in)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	s.answerExecution(c, card, actor, run)
}

// executeRequest reads the request: its card, its body and who it acts
// as — the bearer token's workflow, or, when the card asks for a signature
// instead, the card's signer once the body's signature is verified. The
// credential is checked before the type is named: an unknown type is 404
// only to a caller with a token.
func (s *server) executeRequest(c *gin.Context) (domain.Card, []byte, domain.Actor, error) {
	card, err := s.ledger.Cards.Get(c.Param("type"))
	if err == nil && card.ExecuteAdapter == nil {
		err = domain.Errorf(domain.ENotFound, "operation type %s has no execute_adapter: Handoff cannot make its call", card.Name)
	} else if err != nil {
		err = domain.Errorf(domain.ENotFound, "no operation type named %q", c.Param("type"))
	}
	if err != nil || card.ExecuteEndpoint == nil || card.ExecuteEndpoint.Signature == nil {
		actor, aerr := s.bearer(c)
		if aerr != nil {
			return card, nil, actor, aerr
		}
		if err == nil && s.executor == nil {
			err = domain.Errorf(domain.EUnavailable, "this server does not execute calls")
		}
		var body []byte
		if err == nil {
			body, err = readBody(c, s.bodyLimit)
		}
		return card, body, actor, err
	}
	body, actor, err := s.signedBody(c, *card.ExecuteEndpoint.Signature)
	return card, body, actor, err
}

// signedBody reads the body of a request to a card that asks for a
// signature, and acts as the card's signer once the signature is verified.
func (s *server) signedBody(c *gin.Context, sig domain.ExecuteSignature) ([]byte, domain.Actor, error) {
	body, err := readBody(c, s.bodyLimit)
	if err != nil {
		return nil, domain.Actor{}, err
	}
	if !sig.Verify(body, s.getenv(sig.SecretEnv), c.GetHeader(sig.Header)) {
		return nil, domain.Actor{}, domain.Errorf(domain.EUnauthenticated, "the %s signature of the body is missing or wrong", sig.Header)
	}
	if s.executor == nil {
		return nil, domain.Actor{}, domain.Errorf(domain.EUnavailable, "this server does not execute calls")
	}
	return body, sig.Actor(), nil
}

// answerExecution waits for the call this request started — at once with
// Prefer: respond-async, else up to the card's wait — and answers what the
// operation then is: 200 when completed, 202 while Handoff is still at it
// (running or a retry scheduled), and a problem naming the state when
// another request runs the key or a person must decide.
func (s *server) answerExecution(c *gin.Context, card domain.Card, actor domain.Actor, run domain.ExecuteRun) {
	async := strings.Contains(strings.ToLower(c.GetHeader("Prefer")), "respond-async")
	if run.Done != nil && !async {
		waitForRun(c, run.Done, card.ExecuteEndpoint.WaitOrDefault())
	}
	op := run.Operation
	if latest, err := s.ledger.Workflow.Get(c.Request.Context(), actor, op.ID); err == nil {
		op = latest
	}
	running := run.Done != nil && op.State.Leased()
	switch {
	case op.State == domain.Completed:
		if run.Done == nil {
			c.Header("Idempotent-Replayed", "true")
		}
		s.render(c, http.StatusOK, toOperation(op, true))
		return
	case running || op.State == domain.FailedRetryable:
		s.answerAccepted(c, op, async)
		return
	}
	e := executeRefusal(op, run.Refused)
	if e.RetryAfterSeconds > 0 {
		c.Header("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
	}
	s.fail(c, e)
}

// waitForRun waits until the call is done, wait has passed or the client
// has gone, whichever comes first.
func waitForRun(c *gin.Context, done <-chan struct{}, wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	case <-c.Request.Context().Done():
	}
}

// answerAccepted is the 202 for an operation Handoff is still at: where to
// read it, and when, rounded up to whole seconds, its retry is due (one
// second while its call runs).
func (s *server) answerAccepted(c *gin.Context, op domain.Operation, async bool) {
	wait := 1
	if op.NextRetryAt != nil {
		wait = max(1, int(time.Until(*op.NextRetryAt).Seconds()+0.999))
	}
	if async {
		c.Header("Preference-Applied", "respond-async")
	}
	c.Header("Location", "/v1/operations/"+op.ID)
	c.Header("Retry-After", strconv.Itoa(wait))
	s.render(c, http.StatusAccepted, toOperation(op, true))
}

// executeRefusal is the problem for an operation this request cannot run
// or answer: another request runs it (Retry-After), or it waits for a
// person — the state and the desk page named.
func executeRefusal(op domain.Operation, refused *domain.Error) *domain.Error {
	e := &domain.Error{Code: domain.ENotClaimable, Operation: &op}
	switch op.State {
	case domain.Processing, domain.ActionPending, domain.Received:
		e.Reason, e.RetryAfterSeconds = domain.RefusedRetryLater, 1
		if refused != nil && refused.RetryAfterSeconds > 0 {
			e.RetryAfterSeconds = refused.RetryAfterSeconds
		}
		e.Message = "operation " + op.ID + " is " + op.State.String() + ": another request is running its call; ask again after Retry-After"
		if op.State == domain.Processing || op.State == domain.ActionPending {
			e.Reason = domain.RefusedInProgress
		}
		return e
	case domain.AwaitingApproval:
		e.Reason = domain.RefusedAwaitingApproval
	case domain.Cancelled:
		e.Reason = domain.RefusedCancelled
	default:
		e.Reason = domain.RefusedHandedOff
	}
	e.Message = "operation " + op.ID + " is " + op.State.String() + ": a person decides at " + domain.DeskPath(op.ID)
	if op.State == domain.UnknownOutcome {
		e.Message += " (Handoff looks the call up at the provider first when the card has a lookup_adapter)"
	}
	return e
}

// executeAdapterJSON is a card's execute_adapter as the operation types
// show it: the secret only by its variable's name.
type executeAdapterJSON struct {
	Method                string  `json:"method" schema:"required"`
	URL                   string  `json:"url" schema:"required" doc:"the template, placeholders unfilled"`
	AuthEnv               *string `json:"auth_env" doc:"the variable holding the secret; never the secret"`
	KeyHeader             *string `json:"key_header" doc:"the header carrying the provider key; null for none"`
	Body                  string  `json:"body" schema:"required" doc:"content, form or template"`
	Timeout               string  `json:"timeout" schema:"required"`
	CompletedStatus       []int   `json:"completed_status" schema:"required"`
	CompletedRef          string  `json:"completed_ref" schema:"required"`
	FailedTerminalStatus  []int   `json:"failed_terminal_status" doc:"null: every 4xx but 408, 409 and 429"`
	FailedRetryableStatus []int   `json:"failed_retryable_status" doc:"null: 429, 500, 502, 503, 504"`
	Signature             *string `json:"signature" doc:"the header whose body signature replaces the bearer token at POST /v1/execute/{type}; null for a token"`
}

func toExecuteAdapter(c domain.Card) *executeAdapterJSON {
	a := c.ExecuteAdapter
	if a == nil {
		return nil
	}
	out := &executeAdapterJSON{Method: a.Method, URL: a.URL, AuthEnv: nullIfEmpty(a.AuthEnv), KeyHeader: nullIfEmpty(a.ProviderKeyHeader()),
		Body: a.Body, Timeout: duration(a.RequestTimeout()), CompletedStatus: append([]int{}, a.CompletedStatus...),
		CompletedRef: a.CompletedRef, FailedTerminalStatus: a.TerminalStatus, FailedRetryableStatus: a.RetryableStatus}
	if e := c.ExecuteEndpoint; e != nil && e.Signature != nil {
		out.Signature = nullIfEmpty(e.Signature.Header)
	}
	return out
}
