// Package execute makes an operation's provider call for Handoff itself:
// the card's execute_adapter built into one request, sent through the
// notifications' guard (no private address unless allowed, no redirect
// followed), and its answer read into the outcome the ledger settles. The
// executor runs an operation as Handoff's own worker — register and claim,
// begin, call, settle — for POST /v1/execute/{type} and for the retries
// Handoff makes itself.
//
// One place decides "sent or not sent": the begin is recorded once the
// connection to the provider is up (TLS included) and before the first
// byte of the request is written. A failure before that — the name not
// resolved, the connection refused, the handshake failed — is a call that
// was never sent, settled as retryable; anything that goes wrong after it
// leaves the outcome unknown unless the provider answered.
//
// The secret named by auth_env is read when the request is built and sent
// only as a header; it is never in the evidence, a log line or an answer.
package execute

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/lookup"
	"github.com/opshandoff/handoff/notify"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Caller makes execute adapters' calls.
type Caller struct {
	allowPrivate bool
	getenv       func(string) string
	// TLS, if set, is the client's TLS configuration (a test's own CA).
	TLS *tls.Config
}

// NewCaller builds a caller. allowPrivate lets calls reach private and
// loopback addresses (HANDOFF_EXECUTE_ALLOW_PRIVATE); getenv reads the
// secrets named by auth_env.
func NewCaller(allowPrivate bool, getenv func(string) string) *Caller {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return &Caller{allowPrivate: allowPrivate, getenv: getenv}
}

// maxAnswer is how much of an answer is read; maxResultData how much of it
// is kept as the result's data.
const (
	maxAnswer     = 1 << 20
	maxResultData = 16 << 10
)

// Call is one call's outcome: whether the request was sent, what the
// provider answered, and the settle it leads to (its lease token unset).
type Call struct {
	Sent    bool
	Status  int
	Settle  domain.Settle
	Latency time.Duration
}

// tracer makes a span per provider call (a no-op unless tracing is
// configured).
var tracer = otel.Tracer("github.com/opshandoff/handoff/execute")

// ErrNotBegun is returned by a Begin hook that could not record the begin:
// the call is abandoned before a byte is sent.
var ErrNotBegun = errors.New("the begin was not recorded")

// errCallEnded refuses a connection made after its call ended.
var errCallEnded = errors.New("the call ended before the connection was made")

// Call makes the adapter's request for op. begin is called once the
// connection is up and before any byte of the request is written; if it
// fails, nothing is sent and the call reports it with Sent false and no
// settle to make (Settle.Outcome zero).
func (c *Caller) Call(ctx context.Context, a domain.ExecuteAdapter, op domain.Operation, begin func() error) (result Call) {
	// The span names the operation, never the URL: it may carry content.
	ctx, span := tracer.Start(ctx, "execute", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("handoff.operation_id", op.ID), attribute.String("handoff.type", op.Type)))
	defer func() {
		span.SetAttributes(attribute.Bool("handoff.execute.sent", result.Sent), attribute.Int("http.response.status_code", result.Status),
			attribute.String("handoff.execute.outcome", result.Settle.Outcome.String()))
		span.End()
	}()
	req, unbuilt := c.build(ctx, a, op)
	if unbuilt != nil {
		return Call{Settle: *unbuilt}
	}
	// A dial may finish after the request gave up on it: once the call
	// has ended no connection begins, so a begin is never recorded for a
	// request that was not sent.
	var mu sync.Mutex
	var began, beginFailed, ended bool
	connected := func(conn net.Conn) (net.Conn, error) {
		mu.Lock()
		defer mu.Unlock()
		if ended {
			conn.Close()
			return nil, errCallEnded
		}
		if err := begin(); err != nil {
			beginFailed = true
			conn.Close()
			return nil, fmt.Errorf("%w: %v", ErrNotBegun, err)
		}
		began = true
		return conn, nil
	}
	d := notify.GuardedDialer(a.RequestTimeout(), c.allowPrivate)
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, TLSHandshakeTimeout: a.RequestTimeout(),
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return connected(conn)
		},
		DialTLSContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			host, _, _ := net.SplitHostPort(addr)
			cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
			if c.TLS != nil {
				cfg = c.TLS.Clone()
				cfg.ServerName = host
			}
			tc := tls.Client(conn, cfg)
			if err := tc.HandshakeContext(ctx); err != nil {
				conn.Close()
				return nil, fmt.Errorf("TLS handshake: %w", err)
			}
			return connected(tc)
		}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: a.RequestTimeout(),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	start := time.Now()
	resp, err := client.Do(req)
	mu.Lock()
	ended = true
	sent, refused := began, beginFailed
	mu.Unlock()
	out := Call{Sent: sent}
	if err != nil {
		out.Latency = time.Since(start)
		switch {
		case refused:
			return Call{} // nothing sent, nothing to settle: the begin's own failure says why
		case !sent && errors.Is(err, notify.ErrRefused):
			out.Settle = failure(domain.OutcomeFailedTerminal, domain.ClassConfig, "address_refused",
				"not sent: the provider's address is private, loopback, link-local or metadata "+
					"(HANDOFF_EXECUTE_ALLOW_PRIVATE allows it)")
		case !sent:
			out.Settle = failure(domain.OutcomeFailedRetryable, domain.ClassTransient, "not_sent",
				"not sent: no connection to the provider: "+errorText(err))
		case isTimeout(err):
			out.Settle = failure(domain.OutcomeUnknown, domain.ClassTimeout, "timeout",
				"sent; no answer within "+a.RequestTimeout().String())
		default:
			out.Settle = failure(domain.OutcomeUnknown, domain.ClassTransient, "connection_lost",
				"sent; the connection was lost before the answer: "+errorText(err))
		}
		return out
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	out.Latency, out.Status = time.Since(start), resp.StatusCode
	if err != nil {
		out.Settle = failure(domain.OutcomeUnknown, domain.ClassTransient, "answer_broken",
			fmt.Sprintf("sent; the provider answered %d but the answer broke off: %s", resp.StatusCode, errorText(err)))
		return out
	}
	out.Settle = Read(a, resp.StatusCode, resp.Header, body, time.Now())
	return out
}

// build makes the request, or the settle of a call that cannot be made
// (nothing sent: a template names a missing field, the secret is not set).
func (c *Caller) build(ctx context.Context, a domain.ExecuteAdapter, op domain.Operation) (*http.Request, *domain.Settle) {
	target, err := a.ExecuteRequestURL(op)
	if err != nil {
		s := failure(domain.OutcomeFailedTerminal, domain.ClassValidation, "request_not_built", "not sent: "+err.Error())
		return nil, &s
	}
	body, media, err := a.ExecuteRequestBody(op)
	if err != nil {
		s := failure(domain.OutcomeFailedTerminal, domain.ClassValidation, "request_not_built", "not sent: "+err.Error())
		return nil, &s
	}
	req, err := http.NewRequestWithContext(ctx, a.Method, target, bytes.NewReader(body))
	if err != nil {
		s := failure(domain.OutcomeFailedTerminal, domain.ClassConfig, "request_not_built", "not sent: the request URL is not valid")
		return nil, &s
	}
	req.Header.Set("Content-Type", media)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Handoff-Execute/1")
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	if h := a.ProviderKeyHeader(); h != "" {
		req.Header.Set(h, op.ProviderKey)
	}
	if a.AuthEnv != "" {
		secret := c.getenv(a.AuthEnv)
		if secret == "" {
			s := failure(domain.OutcomeFailedTerminal, domain.ClassConfig, "secret_missing", "not sent: "+a.AuthEnv+" is not set")
			return nil, &s
		}
		header, scheme := a.AuthHeaderAndScheme()
		if scheme != "" {
			secret = scheme + " " + secret
		}
		req.Header.Set(header, secret)
	}
	return req, nil
}

// Read is the settle an answer leads to, by the card's statuses.
func Read(a domain.ExecuteAdapter, status int, h http.Header, body []byte, now time.Time) domain.Settle {
	code := "http_" + strconv.Itoa(status)
	switch a.ReadStatus(status) {
	case domain.ReadCompleted:
		var doc any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&doc) != nil {
			return failure(domain.OutcomeUnknown, domain.ClassUnknown, "no_reference",
				fmt.Sprintf("the provider answered %d, but not with JSON: the reference at %s cannot be read", status, a.CompletedRef))
		}
		v, _ := lookup.Pointer(doc, a.CompletedRef)
		ref := scalar(v)
		if ref == "" {
			return failure(domain.OutcomeUnknown, domain.ClassUnknown, "no_reference",
				fmt.Sprintf("the provider answered %d with no reference at %s", status, a.CompletedRef))
		}
		r := &domain.Result{Ref: ref}
		if _, isObject := doc.(map[string]any); isObject && len(body) <= maxResultData {
			r.Data = json.RawMessage(bytes.TrimSpace(body))
		}
		return domain.Settle{Outcome: domain.OutcomeCompleted, Result: r}
	case domain.ReadTerminal:
		return failure(domain.OutcomeFailedTerminal, domain.StatusClass(status), code,
			fmt.Sprintf("the provider refused the call with %d", status))
	case domain.ReadRetryable:
		s := failure(domain.OutcomeFailedRetryable, domain.StatusClass(status), code,
			fmt.Sprintf("the provider answered %d", status))
		s.RetryAfter = retryAfter(h.Get("Retry-After"), now)
		return s
	}
	return failure(domain.OutcomeUnknown, domain.ClassUnknown, code,
		fmt.Sprintf("the provider answered %d, which the card does not read as completed or failed", status))
}

func failure(o domain.Outcome, class domain.ErrorClass, code, msg string) domain.Settle {
	return domain.Settle{Outcome: o, Error: &domain.ErrorInfo{Class: class, Code: code, Message: msg}}
}

// retryAfter reads a Retry-After header: seconds or an HTTP date, capped
// at an hour.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), time.Hour)
}

func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	return ""
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// errorText is a transport error without the URL that net/http puts in
// front of it (a URL may carry a content value).
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if isTimeout(err) {
		return "timeout"
	}
	return err.Error()
}
