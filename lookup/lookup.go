// Package lookup runs a card's lookup adapter: it builds the one read
// request the card describes, sends it through the notifications' guarded
// client (no private address unless allowed, no redirect followed), reads
// the answer by the card's status codes and JSON pointers, and reports the
// try as evidence. What a try leads to is decided in domain (JudgeLookup);
// the loop that runs lookups on every replica is in reconcile.
//
// The evidence never holds the secret: it is read from the variable the
// card names only when the request is built, and sent only as a header.
// Neither the headers nor the answer's body are kept, and a content field
// used in the URL is left as its placeholder in the recorded URL, since
// content can be personal data the desk shows only to some.
package lookup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/opshandoff/handoff/domain"
	"github.com/opshandoff/handoff/notify"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Looker makes lookups.
type Looker struct {
	client *http.Client
	getenv func(string) string
	now    func() time.Time
}

// New builds a looker. allowPrivate lets lookups reach private and loopback
// addresses (HANDOFF_LOOKUP_ALLOW_PRIVATE); getenv reads the secrets named
// by auth_env.
func New(allowPrivate bool, getenv func(string) string) *Looker {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	return &Looker{client: notify.GuardedClient(time.Minute, allowPrivate), getenv: getenv, now: time.Now}
}

// tracer makes a span per lookup (a no-op unless tracing is configured).
var tracer = otel.Tracer("github.com/opshandoff/handoff/lookup")

// maxAnswer is how much of an answer is read.
const maxAnswer = 1 << 20

// Look makes one lookup of op with the adapter and reads the answer.
func (l *Looker) Look(ctx context.Context, a domain.LookupAdapter, op domain.Operation) (t domain.LookupTry) {
	// The span names the operation, never the URL: it may carry content.
	ctx, span := tracer.Start(ctx, "lookup", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("handoff.operation_id", op.ID), attribute.String("handoff.type", op.Type),
		attribute.String("http.request.method", a.Method)))
	defer func() {
		span.SetAttributes(attribute.String("handoff.lookup.result", t.Result.String()), attribute.Int("http.response.status_code", t.Status))
		span.End()
	}()
	t = domain.LookupTry{At: l.now().UTC(), Method: a.Method, URL: EvidenceURL(a, op)}
	target, err := a.LookupRequestURL(op)
	if err != nil {
		t.Result, t.Error = domain.LookupError, err.Error()
		return t
	}
	ctx, cancel := context.WithTimeout(ctx, a.RequestTimeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, a.Method, target, nil)
	if err != nil {
		t.Result, t.Error = domain.LookupError, "the lookup URL is not valid"
		return t
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "Handoff-Lookup/1")
	for k, v := range a.Headers {
		req.Header.Set(k, v)
	}
	if a.AuthEnv != "" {
		secret := l.getenv(a.AuthEnv)
		if secret == "" {
			t.Result, t.Error = domain.LookupError, a.AuthEnv+" is not set"
			return t
		}
		header, scheme := a.AuthHeaderAndScheme()
		if scheme != "" {
			secret = scheme + " " + secret
		}
		req.Header.Set(header, secret)
	}
	start := time.Now()
	resp, err := l.client.Do(req)
	t.LatencyMs = time.Since(start).Milliseconds()
	if err != nil {
		t.Result, t.Error = domain.LookupError, errorText(err)
		return t
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	t.Status = resp.StatusCode
	if err != nil {
		t.Result, t.Error = domain.LookupError, "the answer broke off: "+errorText(err)
		return t
	}
	t.LatencyMs = time.Since(start).Milliseconds()
	r := Read(a, resp.StatusCode, body, op)
	t.Result, t.Ref, t.State, t.Conflicts, t.Error = r.Result, r.Ref, r.State, r.Conflicts, r.Note
	return t
}

// errorText is a transport error without the URL that net/http puts in
// front of it (a URL may carry a content value).
func errorText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return err.Error()
}

// EvidenceURL is the request's URL as the evidence records it.
func EvidenceURL(a domain.LookupAdapter, op domain.Operation) string { return a.LookupEvidenceURL(op) }

// Describe is the adapter's request in one line, for `handoff lookup`.
func Describe(a domain.LookupAdapter, op domain.Operation) string {
	return fmt.Sprintf("%s %s", a.Method, EvidenceURL(a, op))
}
