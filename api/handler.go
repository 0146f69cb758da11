package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/opshandoff/handoff/domain"
)

// server holds what every handler needs.
type server struct {
	ledger    *domain.Ledger
	auth      Authenticator
	ready     func(context.Context) error
	log       *slog.Logger
	bodyLimit int64
	now       func() time.Time
	// exportChunkTimeout bounds each write of an audit export.
	exportChunkTimeout time.Duration
	// executor makes the calls of POST /v1/execute/{type}; getenv reads
	// the secrets of its request signatures.
	executor Executor
	getenv   func(string) string
	// prepared once by New
	metricsHandler http.Handler
	openapiDoc     []byte
}

// Authenticator is what the api needs from auth: auth.Chain satisfies it.
// The consumer declares the interface, so api depends on no auth type.
type Authenticator interface {
	Authenticate(ctx context.Context, bearer string) (domain.Actor, error)
}

// render writes v as JSON. Marshalling first means a failure still becomes
// a clean 500 problem instead of a half-written body.
// The hot path's answers are encoded by hand (encode_operation.go) into a
// pooled buffer, the same bytes as encoding/json's.
func (s *server) render(c *gin.Context, status int, v any) {
	b := bodyBuffers.Get().(*bytes.Buffer)
	b.Reset()
	defer func() {
		if b.Cap() <= maxPooledBody {
			bodyBuffers.Put(b)
		}
	}()
	body := []byte(nil)
	ok, err := encodeFast(b, v)
	if ok && err == nil {
		body = b.Bytes()
	} else if body, err = json.Marshal(v); err != nil {
		s.fail(c, domain.Wrap(domain.EInternal, err, "response does not marshal"))
		return
	}
	c.Data(status, "application/json; charset=utf-8", body)
}

// renderOperation answers a single-operation use case.
func (s *server) renderOperation(c *gin.Context, op domain.Operation, err error) {
	if err != nil {
		s.fail(c, err)
		return
	}
	s.render(c, http.StatusOK, toOperation(op, false))
}

// opCall is a use case on one operation of a part U of the ledger, as a
// method expression such as (*domain.Workflow).Settle.
type opCall[U, T any] func(U, context.Context, domain.Actor, string, T) (domain.Operation, error)

// The parts of the ledger an operation's action calls: the worker
// protocol's, or a person's at the desk.
func workflow(l *domain.Ledger) *domain.Workflow { return l.Workflow }
func desk(l *domain.Ledger) *domain.Desk         { return l.Desk }

// opAction builds the handler of a POST /v1/operations/{id}/<action>: parse
// the body, call the one use case of the part, render the operation. Those
// handlers differ only in their parser and use case, so they are written
// once.
func opAction[U, T any](parse func([]byte) (T, error), part func(*domain.Ledger) U, call opCall[U, T]) func(*server, *gin.Context) {
	return func(s *server, c *gin.Context) {
		cmd, ok := bind(s, c, parse)
		if !ok {
			return
		}
		op, err := call(part(s.ledger), c.Request.Context(), actorOf(c), c.Param("id"), cmd)
		s.renderOperation(c, op, err)
	}
}
