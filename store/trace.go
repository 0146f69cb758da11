package store

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracer makes the store's spans: a write, and a group commit's flush.
// They are made only under a request whose span is recording, so with
// tracing off (no OTEL_* exporter configured) a write costs nothing more.
var tracer = otel.Tracer("github.com/opshandoff/handoff/store")

// startWrite starts the span of one write of the operation opID, or
// returns ctx and nil when the caller is not traced.
func startWrite(ctx context.Context, kind, opID string) (context.Context, trace.Span) {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return ctx, nil
	}
	return tracer.Start(ctx, "store.write", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.operation.name", kind), attribute.String("handoff.operation_id", opID)))
}

// endSpan ends span (nil: none), marked failed by err.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// flushSpan starts the span of a flush when any of its callers is traced:
// the first traced caller's span is its parent, the others are links.
func flushSpan(batch []*commitRequest) trace.Span {
	var parent trace.SpanContext
	var links []trace.Link
	for _, r := range batch {
		if !r.sc.IsValid() {
			continue
		}
		if !parent.IsValid() {
			parent = r.sc
			continue
		}
		links = append(links, trace.Link{SpanContext: r.sc})
	}
	if !parent.IsValid() {
		return nil
	}
	_, span := tracer.Start(trace.ContextWithSpanContext(context.Background(), parent), "store.flush",
		trace.WithSpanKind(trace.SpanKindClient), trace.WithLinks(links...),
		trace.WithAttributes(attribute.Int("handoff.flush.changes", len(batch))))
	return span
}
