package execute_test

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/opshandoff/handoff/sandbox"
)

// TestExecute_Span: each provider call is a span naming the operation and
// what came of the call, never the URL or the content it may carry.
func TestExecute_Span(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	r := newRig(t, sandbox.IdempotencyKey)
	op := r.do("charge", "order-span", `{"amount": 77123}`)
	var found bool
	for _, s := range rec.Ended() {
		if s.Name() != "execute" {
			continue
		}
		found = true
		attrs := map[string]string{}
		for _, a := range s.Attributes() {
			attrs[string(a.Key)] = a.Value.Emit()
			if v := a.Value.Emit(); strings.Contains(v, "77123") || strings.Contains(v, "http://") {
				t.Errorf("the span carries content or the URL in %s: %s", a.Key, v)
			}
		}
		if attrs["handoff.operation_id"] != op.ID || attrs["handoff.execute.sent"] != "true" || attrs["handoff.execute.outcome"] != "completed" {
			t.Errorf("the execute span: %v", attrs)
		}
	}
	if !found {
		t.Fatal("no execute span")
	}
}
