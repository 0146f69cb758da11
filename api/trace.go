package api

import (
	"log/slog"

	"github.com/gin-gonic/gin"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// tracer makes a span per API call when Config.Tracing is on, through the
// global OpenTelemetry provider the binary sets up from OTEL_* variables.
var tracer = otel.Tracer("github.com/opshandoff/handoff/api")

// traceContext reads and writes W3C traceparent, whatever propagator the
// process has: it is the standard the clients send.
var traceContext = propagation.TraceContext{}

// tracing continues the caller's trace (traceparent) with a server span
// named after the route. After the call the span carries what the access
// log carries of the change the call wrote — operation, key, type,
// namespace, state before and after, attempt — and never content.
func (s *server) tracing(c *gin.Context) {
	ctx := traceContext.Extract(c.Request.Context(), propagation.HeaderCarrier(c.Request.Header))
	ctx, span := tracer.Start(ctx, c.Request.Method+" "+routeLabel(c), trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("http.request.method", methodLabel(c.Request.Method)),
			attribute.String("http.route", routeLabel(c))))
	defer span.End()
	c.Request = c.Request.WithContext(ctx)
	c.Next()
	status := c.Writer.Status()
	span.SetAttributes(attribute.Int("http.response.status_code", status), attribute.String("handoff.request_id", requestID(c)))
	if status >= 500 {
		span.SetStatus(codes.Error, "")
	}
	v, _ := c.Get(keyLogLine)
	if ll, _ := v.(*logLine); ll != nil {
		for _, a := range ll.change.Attrs() {
			if a.Key != "actor" { // a person's identity is their email: not for a tracing system
				span.SetAttributes(spanAttr(a))
			}
		}
	}
}

// spanAttr is a change's log field as a span attribute, "handoff." first.
func spanAttr(a slog.Attr) attribute.KeyValue {
	key := "handoff." + a.Key
	switch v := a.Value.Resolve(); v.Kind() {
	case slog.KindInt64:
		return attribute.Int64(key, v.Int64())
	case slog.KindString:
		return attribute.String(key, v.String())
	default:
		if s, ok := v.Any().(interface{ MarshalText() ([]byte, error) }); ok {
			if b, err := s.MarshalText(); err == nil {
				return attribute.String(key, string(b))
			}
		}
		return attribute.String(key, v.String())
	}
}
